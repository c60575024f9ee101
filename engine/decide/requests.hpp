#pragma once

// Client messages turned into the decider's typed requests. Untrusted text is
// checked here, before it joins a batch: one malformed id or JSON document must
// fail only its own request, never the transaction the batch shares (I11).

#include <string_view>

#include <caf/expected.hpp>

#include "engine/decide/batch.hpp"
#include "proto/messages.hpp"
#include "store/tasks.hpp"
#include "store/workflows.hpp"

namespace nf::engine {

/// A keyless start with a request id is an idempotent start under this key and the id: a
/// retry returns the workflow the first one started (I10), with no table of its own.
inline constexpr std::string_view request_id_key_prefix = "nodeflow.request-id:";

/// The store start request of `m` (without its id); `invalid` naming the field.
caf::expected<store::start_request> to_start(const msg::start_request& m);

caf::expected<store::task_result> to_completion(const msg::task_result& m);

caf::expected<command_request> to_command(const msg::workflow_command& m);

} // namespace nf::engine
