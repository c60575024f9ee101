#include "store/workflows.hpp"

#include <boost/json.hpp>

#include "flow/json_read.hpp"
#include "flow/parse.hpp"
#include "store/decide_queues.hpp"
#include "store/execution_columns.hpp"
#include "store/input_errors.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/sharding.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

constexpr statement select_partition_count{"cluster.partition_count",
                                           R"(SELECT "partitionCount" FROM "ClusterSettings")"};

// docs/schema.md §4.2, batched. Each request's definition is resolved first (the version
// asked for, else the latest: the PK read backwards); a request without one gets no row.
// Its "inputTemplate" lies under an object input: the input's own keys win (Conductor's rule).
// Then the key is inserted and only requests whose key went in (or that have none) get an
// execution. The id is the caller's (start_request::id) or generated once per request, and
// every "startedAt" derives from it; "lastSeq" = 1 is the WORKFLOW_STARTED event written
// here (I8). A start in one of the shards $13 (those whose starts the caller decides in
// this same transaction) gets no "DecideQueues" row: no other transaction can see the
// workflow before that decision commits with it. The resolution is part of the statement
// rather than a read before it, which cost every batch of starts a round trip. The result
// has a row per resolved request, its id NULL where another start holds its key, and the
// execution each wrote as the decider reads one (store/execution_columns.hpp): a workflow
// decided in the transaction that starts it is not read back. Its
// outbox row is written only while a webhook sink is enabled (store/decision_apply.cpp,
// decide.outbox).
constexpr statement start_batch{"workflows.start_batch", R"(
WITH u AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::integer[], $4::jsonb[], $5::text[],
                       $6::text[], $7::smallint[], $8::uuid[], $9::uuid[], $10::jsonb[],
                       $12::uuid[], $14::jsonb[]) WITH ORDINALITY
      AS u(ns, name, version, input, correlation, key, priority, parent_id, parent_task,
           payload, given_id, domains, ord)),
r AS (
  SELECT u.ns, u.name, d."version", d."variables", d."timeoutSeconds",
         CASE WHEN jsonb_typeof(u.input) = 'object' THEN d."inputTemplate" || u.input
              ELSE u.input END AS input, u.correlation,
         u.key, u.priority, u.parent_id, u.parent_task, u.domains,
         u.payload || jsonb_build_object('workflowVersion', d."version") AS payload,
         COALESCE(u.given_id, uuidv7()) AS id, u.ord
    FROM u
   CROSS JOIN LATERAL (
     SELECT "version", "variables", "timeoutSeconds", "inputTemplate" FROM "WorkflowDefinitions"
      WHERE "namespaceId" = u.ns AND "name" = u.name AND (u.version IS NULL OR "version" = u.version)
      ORDER BY "version" DESC LIMIT 1) d),
k AS (
  INSERT INTO "IdempotencyKeys" ("namespaceId", "key", "workflowId", "workflowStartedAt")
  SELECT ns, key, id, uuid_extract_timestamp(id) FROM r WHERE key IS NOT NULL
  ON CONFLICT ("namespaceId", "key") DO NOTHING
  RETURNING "workflowId"),
s AS (
  SELECT r.*, uuid_extract_timestamp(r.id) AS started,
         (('x' || right(r.id::text, 4))::bit(16)::int % $11)::smallint AS shard
    FROM r
   WHERE r.key IS NULL OR r.id IN (SELECT "workflowId" FROM k)),
w AS (
  INSERT INTO "WorkflowExecutions"
    ("id", "startedAt", "namespaceId", "workflowName", "workflowVersion", "status", "input",
     "variables", "correlationId", "idempotencyKey", "priority", "parentWorkflowId",
     "parentWorkflowStartedAt", "parentTaskId", "shard", "lastSeq", "version", "taskToDomain")
  SELECT id, started, ns, name, version, 'RUNNING', input, variables, correlation, key, priority,
         parent_id, uuid_extract_timestamp(parent_id), parent_task, shard, 1, 0, domains
    FROM s
  RETURNING )" NF_EXECUTION_COLUMNS R"(),
e AS (
  INSERT INTO "WorkflowEvents" ("workflowId", "seq", "namespaceId", "eventType", "payload")
  SELECT id, 1, ns, 'WORKFLOW_STARTED', payload FROM s),
q AS (
  )" NF_WAKE_DECIDERS(R"(
  SELECT id, ns, started, shard, 'start' FROM s WHERE shard <> ALL($13::smallint[]))") R"(),
t AS (
  INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt")
  SELECT now() + make_interval(secs => "timeoutSeconds"), shard, 'workflowTimeout', id, started
    FROM s WHERE "timeoutSeconds" > 0),
o AS (
  INSERT INTO "OutboxEvents" ("shard", "namespaceId", "workflowId", "eventType", "payload",
                              "publishedAt")
  SELECT shard, ns, id, 'workflow.started', payload || jsonb_build_object('workflowId', id),
         NULL::timestamptz
    FROM s WHERE (SELECT "outbox_published_at"()) IS NULL)
SELECT r.ord, s.id, s.shard, w.* FROM r LEFT JOIN s ON s.ord = r.ord LEFT JOIN w ON w."id" = s.id)"};

// After a lost key race: the winner committed before this statement began.
constexpr statement select_key_owners{"workflows.key_owners", R"(
SELECT u.ord, k."workflowId"
  FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS u(ns, key, ord)
  JOIN "IdempotencyKeys" k ON k."namespaceId" = u.ns AND k."key" = u.key)"};

bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

/// The WORKFLOW_STARTED payload but its "workflowVersion", which the start statement adds
/// once it resolved the definition.
boost::json::object started_payload(const start_request& r) {
  boost::json::object p{{"workflowName", r.name}};
  if (r.correlation_id)
    p["correlationId"] = *r.correlation_id;
  if (r.idempotency_key)
    p["idempotencyKey"] = *r.idempotency_key;
  if (r.parent) {
    p["parentWorkflowId"] = r.parent->workflow.str();
    p["parentTaskId"] = r.parent->task.str();
  }
  return p;
}

} // namespace

caf::expected<start_request> read_start_request(std::string_view json_text,
                                                const namespace_id& ns) {
  flow::problems errs;
  boost::json::value v;
  if (!flow::parse_json(json_text, v, errs))
    return invalid_input(errs);
  const auto* obj = v.if_object();
  if (obj == nullptr)
    return invalid_input(
      {{"$", "expected a start request (an object), got " + flow::describe(v)}});
  start_request out;
  out.ns = ns;
  flow::object_reader r(*obj, "", errs);
  r.text("name", out.name, true);
  if (r.get("version") != nullptr) {
    int64_t version = 0;
    r.count("version", version);
    out.version = version;
  }
  r.object("input", out.input);
  std::string text;
  if (r.get("correlationId") != nullptr) {
    r.text("correlationId", text);
    out.correlation_id = text;
  }
  if (r.get("idempotencyKey") != nullptr) {
    text.clear();
    r.text("idempotencyKey", text);
    out.idempotency_key = text;
  }
  r.count("priority", out.priority);
  r.finish("a start request");
  if (!errs.empty())
    return invalid_input(errs);
  if (auto more = check_start_request(out); !more.empty())
    return invalid_input(more);
  return out;
}

flow::problems check_start_request(const start_request& r) {
  flow::problems out;
  if (r.name.empty())
    out.push_back({"name", "missing required field (expected a non-empty string)"});
  if (has_nul(r.name))
    out.push_back({"name", "must not contain the NUL character (\\u0000)"});
  if (r.version && (*r.version < 1 || *r.version > flow::max_count))
    out.push_back({"version", "expected an integer from 1 to " + std::to_string(flow::max_count)
                                + ", got " + std::to_string(*r.version)});
  if (r.priority < 0 || r.priority > 99)
    out.push_back({"priority", "expected an integer from 0 to 99, got "
                                 + std::to_string(r.priority)});
  if (r.correlation_id && has_nul(*r.correlation_id))
    out.push_back({"correlationId", "must not contain the NUL character (\\u0000)"});
  if (r.idempotency_key && (r.idempotency_key->empty() || has_nul(*r.idempotency_key)))
    out.push_back({"idempotencyKey", "expected a non-empty string without NUL characters"});
  if (r.id && !is_uuidv7_text(r.id->str()))
    out.push_back({"id", "expected a uuidv7, got " + flow::quoted(r.id->str())});
  if (r.parent && (r.parent->workflow.empty() || r.parent->task.empty()))
    out.push_back({"parent", "expected both the parent workflow id and the parent task id"});
  return out;
}

start_plan plan_starts(const std::vector<start_request>& requests, int partition_count,
                       const std::vector<shard_id>& decided_here) {
  start_plan plan;
  plan.partition_count = partition_count;
  plan.out.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    auto errs = check_start_request(requests[i]);
    if (errs.empty()) {
      plan.out.emplace_back(start_result{});
      plan.ok.push_back(i);
    } else {
      plan.out.emplace_back(invalid_input(errs));
    }
  }
  if (plan.ok.empty())
    return plan;
  std::vector<std::string> b_ns, b_names;
  std::vector<std::optional<std::string>> b_versions;
  std::vector<int64_t> b_priorities;
  std::vector<json_text> b_inputs, b_payloads;
  std::vector<std::optional<std::string>> b_correlations, b_keys, b_parents, b_parent_tasks,
    b_ids;
  std::vector<std::optional<json_text>> b_domains;
  for (auto i : plan.ok) {
    const auto& r = requests[i];
    b_ns.push_back(r.ns.str());
    b_names.push_back(r.name);
    b_versions.push_back(r.version ? std::optional<std::string>{std::to_string(*r.version)}
                                   : std::nullopt);
    b_inputs.push_back(json(r.input));
    b_correlations.push_back(r.correlation_id);
    b_keys.push_back(r.idempotency_key);
    b_priorities.push_back(r.priority);
    b_parents.push_back(r.parent ? std::optional<std::string>{r.parent->workflow.str()}
                                 : std::nullopt);
    b_parent_tasks.push_back(r.parent ? std::optional<std::string>{r.parent->task.str()}
                                      : std::nullopt);
    b_payloads.push_back(json(started_payload(r)));
    b_ids.push_back(r.id ? std::optional<std::string>{r.id->str()} : std::nullopt);
    b_domains.push_back(r.task_to_domain.empty() ? std::nullopt
                                                 : std::optional<json_text>{json(r.task_to_domain)});
  }
  plan.p = params::of(text_array(b_ns), text_array(b_names), text_array(b_versions),
                      json_array(b_inputs), text_array(b_correlations), text_array(b_keys),
                      int_array(b_priorities), text_array(b_parents), text_array(b_parent_tasks),
                      json_array(b_payloads), int64_t{partition_count}, text_array(b_ids),
                      shard_array(decided_here), json_array(b_domains));
  return plan;
}

bool add_starts(pipeline& p, const start_plan& plan) {
  if (plan.ok.empty())
    return false;
  p.add(start_batch, plan.p);
  return true;
}

caf::expected<std::vector<caf::expected<start_result>>>
start_workflows(transaction& tx, const std::vector<start_request>& requests, int partition_count,
                const std::vector<shard_id>& decided_here) {
  auto plan = plan_starts(requests, partition_count, decided_here);
  pipeline p{tx.conn()};
  if (!add_starts(p, plan))
    return std::move(plan.out);
  auto written = p.run();
  if (!written)
    return std::move(written.error());
  return starts_of(tx, requests, std::move(plan), written->front());
}

caf::expected<std::vector<caf::expected<start_result>>>
starts_of(transaction& tx, const std::vector<start_request>& requests, start_plan plan,
          const result& written, std::vector<workflow_snapshot>* created_executions) {
  auto& out = plan.out;
  const auto& ok = plan.ok;
  // A row per request whose definition resolved; a NULL id: its key is another start's.
  std::vector<bool> resolved(ok.size(), false), created(ok.size(), false);
  // The execution each wrote follows the request's ordinal, id and shard.
  // The first "id" and "shard" are the start's own (s.id, s.shard), before the execution's.
  const int ord = written.column_named("ord"), start_id = written.column_named("id"),
            start_shard = written.column_named("shard");
  const execution_columns written_execution{written, 3};
  for (int row = 0; row < written.rows(); ++row) {
    auto j = static_cast<size_t>(written.i64(row, ord) - 1);
    resolved[j] = true;
    if (written.is_null(row, start_id))
      continue;
    created[j] = true;
    out[ok[j]] = start_result{workflow_id{written.str(row, start_id)}, true,
                              shard_id{static_cast<int16_t>(written.i64(row, start_shard))}};
    if (created_executions != nullptr)
      created_executions->push_back(execution_of(written, written_execution, row));
  }
  for (size_t j = 0; j < ok.size(); ++j) {
    if (resolved[j])
      continue;
    const auto& r = requests[ok[j]];
    std::string what = "workflow definition " + flow::quoted(r.name);
    if (r.version)
      what += " version " + std::to_string(*r.version);
    out[ok[j]] = make_error(errc::not_found, what + " not found");
  }

  // Keys another start (or an earlier request of this batch) holds.
  std::vector<size_t> lost;
  std::vector<std::string> l_ns, l_keys;
  for (size_t j = 0; j < ok.size(); ++j) {
    if (!resolved[j] || created[j])
      continue;
    const auto& r = requests[ok[j]];
    if (!r.idempotency_key)
      return make_error(errc::internal, "start of " + flow::quoted(r.name)
                                          + " wrote no execution and holds no key");
    lost.push_back(ok[j]);
    l_ns.push_back(r.ns.str());
    l_keys.push_back(*r.idempotency_key);
  }
  if (lost.empty())
    return std::move(out);
  auto owners = tx.conn().run(select_key_owners, params::of(text_array(l_ns), text_array(l_keys)));
  if (!owners)
    return std::move(owners.error());
  const int owner_ord = owners->column_named("ord"), owner = owners->column_named("workflowId");
  for (int row = 0; row < owners->rows(); ++row) {
    auto i = lost[static_cast<size_t>(owners->i64(row, owner_ord) - 1)];
    workflow_id id{owners->str(row, owner)};
    auto shard = shard_of(id, plan.partition_count);
    out[i] = start_result{std::move(id), false, shard};
  }
  for (auto i : lost)
    if (out[i] && out[i]->id.empty())
      return make_error(errc::internal, "idempotency key " + flow::quoted(*requests[i].idempotency_key)
                                          + " was taken but its owner is not visible");
  return std::move(out);
}

caf::expected<start_result> start_workflow(connection& conn, const start_request& request,
                                           int partition_count) {
  return perform(conn, [&](transaction& tx) -> caf::expected<start_result> {
    auto rs = start_workflows(tx, {request}, partition_count);
    if (!rs)
      return std::move(rs.error());
    return std::move(rs->front());
  });
}

caf::expected<int> load_partition_count(connection& conn) {
  auto r = conn.run1(select_partition_count);
  if (!r)
    return std::move(r.error());
  return static_cast<int>(r->i64(0, r->column_named("partitionCount")));
}

} // namespace nf::store
