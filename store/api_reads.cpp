#include "store/api_reads.hpp"

#include "proto/errors.hpp"

namespace nf::store {

namespace {

constexpr statement header{"api.execution_header", R"(
SELECT "namespaceId", "workflowName", "status", "shard" FROM "WorkflowExecutions"
 WHERE "id" = $1 AND "startedAt" = uuid_extract_timestamp($1::uuid))"};

// One statement per filter shape, so each runs on the index made for it
// (docs/schema.md §2: _ns_status_idx, _ns_name_idx, _ns_startedAt_idx). The
// keyset is ("startedAt", "id") < the previous page's last row; "startedAt"
// is uuid_extract_timestamp("id"), so that id alone gives both. Every bound on
// "startedAt" is also written as a plain comparison (COALESCE to ±infinity when
// absent), so it bounds the index scan even in a generic plan: a page half-way
// back through a million executions starts there instead of scanning to it.
#define NF_SEARCH_COLUMNS                                                                        \
  R"(SELECT "id", "workflowName", "workflowVersion", "status",)"                                \
  R"( (extract(epoch FROM "startedAt") * 1000)::bigint AS started_at_ms,)"                     \
  R"( (extract(epoch FROM "endedAt") * 1000)::bigint AS ended_at_ms,)"                          \
  R"( "correlationId", "reasonForIncompletion")"                                               \
  R"( FROM "WorkflowExecutions" WHERE "namespaceId" = $1)"
#define NF_SEARCH_BOUNDS                                                                         \
  R"( AND "startedAt" >= COALESCE(to_timestamp($2::bigint / 1000.0), '-infinity'))"            \
  R"( AND "startedAt" < COALESCE(to_timestamp($3::bigint / 1000.0), 'infinity'))"              \
  R"( AND "startedAt" <= COALESCE(uuid_extract_timestamp($4::uuid), 'infinity'))"              \
  R"( AND ($4::uuid IS NULL OR "startedAt" < uuid_extract_timestamp($4::uuid))"                \
  R"(      OR "id" < $4::uuid))"                                                                 \
  R"( ORDER BY "startedAt" DESC, "id" DESC LIMIT $5)"

constexpr statement search_all{"api.search", NF_SEARCH_COLUMNS NF_SEARCH_BOUNDS};
constexpr statement search_status{
  "api.search_status",
  NF_SEARCH_COLUMNS R"( AND "status" = $6::workflow_execution_status)" NF_SEARCH_BOUNDS};
constexpr statement search_name{"api.search_name",
                                NF_SEARCH_COLUMNS R"( AND "workflowName" = $6)" NF_SEARCH_BOUNDS};
constexpr statement search_status_name{
  "api.search_status_name",
  NF_SEARCH_COLUMNS R"( AND "status" = $6::workflow_execution_status AND "workflowName" = $7)"
    NF_SEARCH_BOUNDS};

// A correlation id names few executions: its partial index, the other filters on its rows.
constexpr statement search_correlation{
  "api.search_correlation",
  NF_SEARCH_COLUMNS R"( AND "correlationId" = $6)"
    R"( AND ($7::workflow_execution_status IS NULL OR "status" = $7::workflow_execution_status))"
    R"( AND ($8::text IS NULL OR "workflowName" = $8))" NF_SEARCH_BOUNDS};

// Per status, the executions matching the filters up to a cap: a count stops at the cap, so
// over millions of finished executions it costs at most `cap` index entries per status. One
// branch per status, each with its status as a constant, so the planner weighs each on its
// own (a status few executions have: its index; RUNNING and PAUSED: the active index).
#define NF_COUNT_ONE(STATUS, FILTER)                                                             \
  R"(SELECT ')" STATUS R"(' AS status, (SELECT count(*) FROM (SELECT 1)"                         \
  R"( FROM "WorkflowExecutions" w WHERE w."namespaceId" = $1 AND w."status" = ')" STATUS R"(')" \
  R"( AND w."startedAt" >= COALESCE(to_timestamp($2::bigint / 1000.0), '-infinity'))"          \
  R"( AND w."startedAt" < COALESCE(to_timestamp($3::bigint / 1000.0), 'infinity'))" FILTER     \
  R"( LIMIT $4) AS capped) AS n)"
#define NF_COUNT(FILTER)                                                                         \
  NF_COUNT_ONE("RUNNING", FILTER) " UNION ALL " NF_COUNT_ONE("PAUSED", FILTER)                   \
  " UNION ALL " NF_COUNT_ONE("COMPLETED", FILTER) " UNION ALL " NF_COUNT_ONE("FAILED", FILTER)   \
  " UNION ALL " NF_COUNT_ONE("TIMED_OUT", FILTER) " UNION ALL " NF_COUNT_ONE("TERMINATED", FILTER)

constexpr statement count_all{"api.count", NF_COUNT("")};
constexpr statement count_name{"api.count_name", NF_COUNT(R"( AND w."workflowName" = $5)")};
constexpr statement count_correlation{
  "api.count_correlation",
  NF_COUNT(R"( AND w."correlationId" = $5 AND ($6::text IS NULL OR w."workflowName" = $6))")};

constexpr statement pending{"api.pending_decisions", R"(
SELECT "shard", count(*) AS pending FROM "DecideQueues" GROUP BY "shard" ORDER BY "shard")"};

constexpr statement response_timeout{"api.task_response_timeout", R"(
SELECT d."responseTimeoutSeconds" FROM "TaskExecutions" t
  LEFT JOIN "TaskDefinitions" d ON d."namespaceId" = t."namespaceId" AND d."name" = t."taskDefName"
 WHERE t."workflowId" = $1 AND t."id" = $2 AND t."namespaceId" = $3)"};

// The latest attempt of a ref, on "TaskExecutions_identity_idx".
constexpr statement task_by_ref{"api.task_by_ref", R"(
SELECT "id", "taskType", "status" FROM "TaskExecutions"
 WHERE "workflowId" = $1 AND "refName" = $2
 ORDER BY "iteration" DESC, "attempt" DESC LIMIT 1)"};

constexpr statement dead_letter_at{"api.dead_letter_position", R"(
SELECT "deadLetteredAt" FROM "OutboxEvents"
 WHERE "id" = $1 AND "deadLetteredAt" IS NOT NULL AND "namespaceId" = $2)"};

flow::workflow_status status_of(std::string_view label) {
  auto s = flow::parse_workflow_status(label);
  return s ? *s : flow::workflow_status::running;
}

} // namespace

caf::expected<execution_header> read_execution_header(connection& conn, const workflow_id& id) {
  auto r = conn.run01(header, params::of(id));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "workflow " + id.str() + " not found");
  const auto& row = **r;
  execution_header h;
  h.id = id;
  h.ns = namespace_id{row.str(0, row.column_named("namespaceId"))};
  h.workflow_name = row.str(0, row.column_named("workflowName"));
  h.status = status_of(row.text(0, row.column_named("status")));
  h.shard = static_cast<int16_t>(row.i64(0, row.column_named("shard")));
  return h;
}

caf::expected<execution_page> search_executions(connection& conn, const execution_search& q) {
  if (q.limit < 1 || q.limit > 1000)
    return make_error(errc::invalid,
                      "limit: expected an integer 1 … 1000, got " + std::to_string(q.limit));
  auto p = params::of(q.ns, q.started_after_ms, q.started_before_ms, q.after, int64_t{q.limit});
  const statement* st = &search_all;
  if (q.correlation_id) {
    st = &search_correlation;
    std::optional<std::string> status;
    if (q.status)
      status = std::string{flow::to_string(*q.status)};
    p.add(*q.correlation_id).add(status).add(q.workflow_name);
  } else if (q.status && q.workflow_name) {
    st = &search_status_name;
    p.add(std::string{flow::to_string(*q.status)}).add(*q.workflow_name);
  } else if (q.status) {
    st = &search_status;
    p.add(std::string{flow::to_string(*q.status)});
  } else if (q.workflow_name) {
    st = &search_name;
    p.add(*q.workflow_name);
  }
  auto r = conn.run(*st, p);
  if (!r)
    return std::move(r.error());
  execution_page page;
  const int id = r->column_named("id"), name = r->column_named("workflowName"),
            version = r->column_named("workflowVersion"), status = r->column_named("status"),
            started = r->column_named("started_at_ms"), ended = r->column_named("ended_at_ms"),
            correlation = r->column_named("correlationId"),
            reason = r->column_named("reasonForIncompletion");
  for (int i = 0; i < r->rows(); ++i) {
    execution_summary s;
    s.id = workflow_id{r->str(i, id)};
    s.workflow_name = r->str(i, name);
    s.workflow_version = r->i32(i, version);
    s.status = status_of(r->text(i, status));
    s.started_at_ms = r->i64(i, started);
    s.ended_at_ms = r->opt_i64(i, ended);
    s.correlation_id = r->opt_str(i, correlation);
    s.reason_for_incompletion = r->opt_str(i, reason);
    page.items.push_back(std::move(s));
  }
  if (r->rows() == q.limit)
    page.next = page.items.back().id;
  return page;
}

caf::expected<std::vector<std::pair<std::string, int64_t>>>
count_executions(connection& conn, const execution_search& q, int64_t cap) {
  auto p = params::of(q.ns, q.started_after_ms, q.started_before_ms, cap);
  const statement* st = &count_all;
  if (q.correlation_id) {
    st = &count_correlation;
    p.add(*q.correlation_id).add(q.workflow_name);
  } else if (q.workflow_name) {
    st = &count_name;
    p.add(*q.workflow_name);
  }
  auto r = conn.run(*st, p);
  if (!r)
    return std::move(r.error());
  std::vector<std::pair<std::string, int64_t>> out;
  const int status = r->column_named("status"), n = r->column_named("n");
  for (int i = 0; i < r->rows(); ++i)
    out.emplace_back(r->str(i, status), r->i64(i, n));
  return out;
}

caf::expected<std::vector<std::pair<int16_t, int64_t>>> pending_decisions(connection& conn) {
  auto r = conn.run(pending);
  if (!r)
    return std::move(r.error());
  std::vector<std::pair<int16_t, int64_t>> out;
  const int shard = r->column_named("shard"), count = r->column_named("pending");
  for (int i = 0; i < r->rows(); ++i)
    out.emplace_back(static_cast<int16_t>(r->i64(i, shard)), r->i64(i, count));
  return out;
}

caf::expected<std::optional<int>> task_response_timeout(connection& conn, const workflow_id& wf,
                                                        const task_id& task,
                                                        const namespace_id& ns) {
  auto r = conn.run01(response_timeout, params::of(wf, task, ns));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "task " + task.str() + " of workflow " + wf.str()
                                         + " not found");
  auto secs = (*r)->opt_i64(0, (*r)->column_named("responseTimeoutSeconds"));
  if (!secs || *secs <= 0)
    return std::optional<int>{};
  return std::optional<int>{static_cast<int>(*secs)};
}

caf::expected<task_at_ref> latest_task_at_ref(connection& conn, const workflow_id& wf,
                                              const std::string& ref) {
  auto r = conn.run01(task_by_ref, params::of(wf, ref));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "task " + ref + " of workflow " + wf.str()
                                         + " not found");
  const auto& row = **r;
  return task_at_ref{task_id{row.str(0, row.column_named("id"))},
                     row.str(0, row.column_named("taskType")),
                     row.str(0, row.column_named("status"))};
}

caf::expected<dead_letter_cursor> dead_letter_position(connection& conn, int64_t id,
                                                      const namespace_id& ns) {
  auto r = conn.run01(dead_letter_at, params::of(id, ns));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "dead letter " + std::to_string(id) + " not found");
  return dead_letter_cursor{(*r)->str(0, (*r)->column_named("deadLetteredAt")), id};
}

} // namespace nf::store
