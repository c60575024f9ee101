#pragma once

// Reading Conductor's workflow request bodies and search queries into the client
// protocol's messages. Each reader answers the exchange with 400 naming the field and
// returns nullopt when the request cannot be honoured as written: a field nodeflow does not
// implement is refused, never dropped.

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "net/web/exchange.hpp"
#include "proto/messages.hpp"

namespace nf::net::web {

/// What a key that already named a workflow does to a start (Conductor's
/// idempotencyStrategy).
enum class idempotency { fail, return_existing, fail_on_running };

struct start_spec {
  msg::start_request req;
  idempotency strategy = idempotency::fail;
};

/// Conductor's StartWorkflowRequest: name, version, input, correlationId, priority,
/// idempotencyKey, idempotencyStrategy, taskToDomain (one domain per task name or "*",
/// proto/domains.hpp); workflowDef, externalInputPayloadStoragePath and createdBy only
/// when null or empty. `name_required`:
/// false when the path names the workflow (its body may then leave the name out).
std::optional<start_spec> read_start_request(const exchange_ptr& ex,
                                             const boost::json::object& body,
                                             bool name_required = true);

/// Conductor's RerunWorkflowRequest, as far as nodeflow reruns: reRunFromTaskId (required),
/// taskInput, reRunFromWorkflowId (only this workflow), workflowInput and correlationId
/// only when null or empty.
struct rerun_spec {
  std::string task_id;
  std::string task_input_json; ///< empty = the input its definition resolves
};
std::optional<rerun_spec> read_rerun_request(const exchange_ptr& ex,
                                             const boost::json::object& body,
                                             const std::string& workflow_id);

/// A search's filters from `query` (clauses joined by AND: `status = X`,
/// `status IN (A,B)`, `workflowType = X`, `correlationId = X`, `startTime > ms`,
/// `startTime < ms`, also >= and <=) and the plain parameters `status`, `workflowType`,
/// `correlationId`. Several statuses leave `req.status` empty and list them in `statuses`:
/// the page is filtered on them after it is read.
struct search_spec {
  msg::search_request req;
  std::vector<std::string> statuses;
};
std::optional<search_spec> read_search(const exchange_ptr& ex);

/// A search's page parameters, as Conductor's clients send them: `size` (1 … 1000, default
/// 100), `start` (0 only: pages follow the cursor), `freeText` (* or empty) and `sort`
/// (empty or `sort_key`, the index's order). The size, or nullopt with the refusal answered.
std::optional<int32_t> read_search_page(const exchange_ptr& ex, const char* sort_key);

/// A search query's clauses (split on AND, any case) and a clause value without its
/// quotes ('x' or "x"): what the workflow and task searches share.
std::vector<std::string> split_and(const std::string& query);
std::string unquote(std::string value);

/// One clause of a search query: `field op value`, the op upper-cased (=, IN, >, <, >=,
/// <=), the value as written.
struct query_clause {
  std::string field;
  std::string op;
  std::string value;
};

/// Reads one clause; nullopt with `why` when it has another shape, or when an unquoted value
/// holds an OR (it would take the rest of the OR as its own).
std::optional<query_clause> parse_clause(const std::string& clause, std::string& why);

/// The values of `= X` (one) or `IN (A,B)` (each), unquoted; nullopt with `why` when an IN
/// names no list.
std::optional<std::vector<std::string>> clause_values(const query_clause& c, std::string& why);

} // namespace nf::net::web
