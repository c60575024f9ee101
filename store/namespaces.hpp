#pragma once

// The "Namespaces" table: tenants of one cluster. Every other row names its namespace by
// id ("namespaceId"); clients name it by its name, which resolve() turns into the id.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/audit.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct namespace_row {
  namespace_id id;
  std::string name;
  int64_t created_at_ms = 0;
};

/// The namespace named `name`, or `not_found` ("namespace NAME not found").
caf::expected<namespace_row> find_namespace(connection& conn, const std::string& name);

/// Every namespace, by name.
caf::expected<std::vector<namespace_row>> list_namespaces(connection& conn);

/// A new namespace; `conflict` when the name is taken.
caf::expected<namespace_row> create_namespace(connection& conn, const std::string& name);

/// Removes the namespace `name` in one transaction, after checking under a lock on its row
/// that it holds no definitions, no running or paused execution, no webhook sink and no vector
/// index (`conflict` naming which); "default" is never removed (`invalid`). Its finished
/// executions stay, unreachable: no request can name the removed id again (a namespace made
/// anew gets a new id).
/// With `audit`, the removal's audit record is written in its transaction.
caf::expected<void> remove_namespace(connection& conn, const std::string& name,
                                     const audit_event* audit = nullptr);

} // namespace nf::store
