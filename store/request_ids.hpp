#pragma once

// Request ids (migration 0037, "RequestIds"): a signal, an operator command or a task update
// a client sends with a request id is applied once, however often it is retried. The id's row
// is written in the transaction of the effect: a retry finds it, applies nothing and gets the
// first request's answer. Starts need none: a keyless start with a request id is an idempotent
// start (its key derived from the id, engine/operations.hpp).

#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/params.hpp"

namespace nf::store {

/// What a request id stands for: its namespace and id, and what it asked of which target
/// (`kind` "signal", "command.pause", …; `target` the workflow and what else names the effect).
struct request_use {
  namespace_id ns;
  std::string id;
  std::string kind;
  std::string target;
};

/// Claims `use` with its `answer` in the transaction of its effect, before the effect is
/// written: nullopt when the id is new (the caller applies the effect); the stored answer when
/// an earlier request with this id committed (the caller applies nothing). A reused id for
/// another kind or target is `invalid`, naming both. A concurrent first request with the same
/// id is waited for (the primary key's lock). One statement while the id is new.
caf::expected<std::optional<std::string>> claim_request(connection& conn, const request_use& use,
                                                        const json_text& answer);

/// The stored answer of an earlier request with `use`'s id (nullopt: none), for a request
/// refused now (a signal to a workflow that has ended since): a retry of the request that
/// ended it is answered as it was. `invalid` as for claim_request.
caf::expected<std::optional<std::string>> earlier_request(connection& conn,
                                                          const request_use& use);

/// Deletes at most `limit` request ids older than `retention_hours`; answers how many.
caf::expected<int64_t> prune_request_ids(connection& conn, int64_t retention_hours,
                                         int64_t limit);

} // namespace nf::store
