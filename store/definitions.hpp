#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "flow/definitions.hpp"
#include "flow/problem.hpp"
#include "store/audit.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// Task and workflow definitions ("TaskDefinitions", "WorkflowDefinitions").
/// Every write names its columns (seed 000 rule 5): a flow field without a
/// column here is a field silently dropped. flow's "0 = none" for optional
/// limits is stored as NULL where the schema's CHECK says `> 0` or "NULL = not
/// set", and read back as 0, so a definition round-trips unchanged.
///
/// Writes are validated (flow::validate plus the columns' own ranges) before
/// anything is sent; an invalid definition is an `invalid` error whose message
/// lists every problem as `path: what was expected`, and nothing is written.

/// Upserts task definitions in one transaction of their own (call it outside
/// one); returns each one's new "revision" (1 on create, +1 per update), in order.
caf::expected<std::vector<int64_t>> put_task_defs(connection& conn, const namespace_id& ns,
                                                  const std::vector<flow::task_def>& defs);

/// The same from JSON text: one task definition object or an array of them
/// (Conductor's `POST /metadata/taskdefs`). Problem paths are `[i].field` for
/// an array.
caf::expected<std::vector<int64_t>> put_task_defs_json(connection& conn, const namespace_id& ns,
                                                       std::string_view json_text);

/// Upserts one workflow definition (a transaction of its own: call it outside one).
caf::expected<void> put_workflow_def(connection& conn, const namespace_id& ns,
                                     const flow::workflow_def& def);

/// Upserts task and workflow definitions together, in one transaction of their own
/// (call it outside one): every one of them or, on any error, none (I11). Task
/// definitions go first, so a workflow may use one registered with it. Problem paths
/// are `taskDefs[i].field` and `workflowDefs[i].field`; a caller that reads the
/// definitions from input checks them first (check_task_def, check_workflow_def) with
/// paths of that input. Returns each task definition's new revision, in order. `audit`,
/// when given, is written with them, in the same round trip (store/audit.hpp).
caf::expected<std::vector<int64_t>>
put_definitions(connection& conn, const namespace_id& ns, const std::vector<flow::task_def>& tasks,
                const std::vector<flow::workflow_def>& workflows,
                const audit_event* audit = nullptr);

/// The same from JSON text; returns the definition as parsed.
caf::expected<flow::workflow_def> put_workflow_def_json(connection& conn, const namespace_id& ns,
                                                        std::string_view json_text);

/// Every task definition of a namespace, by name.
caf::expected<flow::task_def_map> load_task_defs(connection& conn, const namespace_id& ns);

/// One workflow definition; `version` absent = the latest. A missing one is
/// `not_found`: `workflow definition "x" version 3 not found`.
caf::expected<flow::workflow_def> load_workflow_def(connection& conn, const namespace_id& ns,
                                                    std::string_view name,
                                                    std::optional<int64_t> version = std::nullopt);

/// Every version of every workflow definition of a namespace, by name then version.
caf::expected<std::vector<flow::workflow_def>> load_all_workflow_defs(connection& conn,
                                                                      const namespace_id& ns);

/// Deletes a task definition (a transaction of its own). A task definition that workflow
/// definitions still name is kept and the answer is `conflict` naming them: their tasks
/// would silently lose its retries, timeouts and queue. `not_found` when there is none.
/// `audit`, when given, is written in that transaction once the row is gone (both deletes).
caf::expected<void> delete_task_def(connection& conn, const namespace_id& ns,
                                    std::string_view name, const audit_event* audit = nullptr);

/// Deletes one version of a workflow definition (a transaction of its own). Running or
/// paused executions of that version read it at every decision, so while one exists the
/// answer is `conflict` and nothing is deleted. `not_found` when there is none.
caf::expected<void> delete_workflow_def(connection& conn, const namespace_id& ns,
                                        std::string_view name, int64_t version,
                                        const audit_event* audit = nullptr);

/// The problems that keep a definition out of the database: flow::validate's
/// and the columns' (ranges, NUL bytes in text). Empty = writable.
flow::problems check_task_def(const flow::task_def& def, const std::string& path = "");
flow::problems check_workflow_def(const flow::workflow_def& def, const std::string& path = "");

} // namespace nf::store
