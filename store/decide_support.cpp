#include "store/decide_support.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "store/json.hpp"
#include "store/payloads.hpp"
#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// Each namespace's "stamp", which every write of its definitions moves in the writing
// transaction (migration 0020): one row per namespace, however many definitions it holds.
// A namespace without a row has never had a definition.
constexpr statement definition_stamps{"decide.definition_stamps", R"(
SELECT u.ns::text, COALESCE(s."stamp", 0)::text AS stamp
  FROM unnest($1::uuid[]) AS u(ns)
  LEFT JOIN "DefinitionStamps" s ON s."namespaceId" = u.ns)"};

// The "at" bound prunes every month before the workflow started. The event types are
// the predicate of "WorkflowEvents_facts_idx" (migration 0014), repeated so that the
// read walks that index and not the workflow's whole history.
constexpr statement history_facts_read{"decide.history_facts", R"(
SELECT u.wf::text, e."seq", e."eventType"::text, e."payload"::text, e."payloadId",
       (extract(epoch FROM e."at") * 1000)::bigint AS at_ms
  FROM unnest($1::uuid[]) AS u(wf)
  JOIN "WorkflowEvents" e ON e."workflowId" = u.wf AND e."at" >= uuid_extract_timestamp(u.wf)
 WHERE e."workflowId" = ANY($1::uuid[])
   AND e."eventType" IN ('SIGNAL_RECEIVED', 'WORKFLOW_RETRIED', 'WORKFLOW_RERUN',
                        'WORKFLOW_RESTARTED')
 ORDER BY u.wf, e."seq")"};

// The same rounding as the snapshot's times ("scheduledAt" and the rest, in
// decisions.cpp), so a deadline computed from a row compares with this clock exactly.
constexpr statement now_ms_read{"decide.now_ms", R"(
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms)"};

constexpr statement link_children{"decide.link_sub_workflows", R"(
UPDATE "TaskExecutions" t
   SET "subWorkflowId" = u.child, "status" = 'IN_PROGRESS',
       "startedAt" = COALESCE(t."startedAt", now()), "updatedAt" = now()
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS u(wf, tid, child)
 WHERE t."workflowId" = u.wf AND t."id" = u.tid AND t."status" = 'SCHEDULED'
   AND t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[]))", 1};

// The plan's read, without locks; apply_transition re-checks the status under them.
constexpr statement read_parent_tasks{"decide.read_parent_tasks", R"(
SELECT u.ord, t."status"::text, t."scheduledAt"::text, t."refName", t."iteration",
       t."attempt", t."namespaceId", w."shard"
  FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS u(wf, tid, ord)
  JOIN "TaskExecutions" t ON t."workflowId" = u.wf AND t."id" = u.tid
  JOIN "WorkflowExecutions" w ON w."id" = u.wf AND w."startedAt" = uuid_extract_timestamp(u.wf)
 WHERE t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[]) AND w."id" = ANY($1::uuid[])
   /*started: w."startedAt" */)", 1, 1};

constexpr statement drop_rows{"decide.drop_orphans", R"(
DELETE FROM "DecideQueues" WHERE "workflowId" = ANY($1::uuid[]))"};

constexpr statement existing{"decide.existing_workflows", R"(
SELECT u.wf::text
  FROM unnest($1::uuid[]) AS u(wf)
  JOIN "WorkflowExecutions" w ON w."id" = u.wf AND w."startedAt" = uuid_extract_timestamp(u.wf)
 WHERE w."id" = ANY($1::uuid[]) /*started: w."startedAt" */)", 0, 1};

array_literal id_list(const std::vector<workflow_id>& ids) {
  return ids_array(ids, [](const workflow_id& id) { return id; });
}

} // namespace

void add_now_ms(pipeline& p) {
  p.add(now_ms_read, params{});
}

int64_t now_ms_of(const result& r) {
  return r.i64(0, r.column_named("now_ms"));
}

caf::expected<int64_t> server_now_ms(connection& conn) {
  auto r = conn.run1(now_ms_read);
  if (!r)
    return std::move(r.error());
  return now_ms_of(*r);
}

void add_definition_stamps(pipeline& p, const std::vector<namespace_id>& namespaces) {
  p.add(definition_stamps,
        params::of(ids_array(namespaces, [](const namespace_id& n) { return n; })));
}

std::map<std::string, std::string> definition_stamps_of(const result& r) {
  std::map<std::string, std::string> out;
  const int ns = r.column_named("ns"), stamp = r.column_named("stamp");
  for (int row = 0; row < r.rows(); ++row)
    out[r.str(row, ns)] = r.str(row, stamp);
  return out;
}

caf::expected<std::map<std::string, std::string>>
load_definition_stamps(connection& conn, const std::vector<namespace_id>& namespaces) {
  if (namespaces.empty())
    return std::map<std::string, std::string>{};
  pipeline p{conn};
  add_definition_stamps(p, namespaces);
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  return definition_stamps_of((*rs)[0]);
}

void add_history_facts(pipeline& p, const std::vector<workflow_id>& ids) {
  p.add(history_facts_read, params::of(id_list(ids)));
}

caf::expected<std::map<std::string, history_facts>> history_facts_of(connection& conn,
                                                                     const result& r) {
  std::map<std::string, history_facts> out;
  const int wf = r.column_named("wf"), seq = r.column_named("seq"),
            event_type = r.column_named("eventType"), payload_text = r.column_named("payload"),
            payload_id = r.column_named("payloadId"), at_ms = r.column_named("at_ms");
  // A signal's payload stored out of line (store/payloads.hpp), read only when there is one.
  std::vector<std::pair<std::string, std::string>> refs;
  for (int row = 0; row < r.rows(); ++row)
    if (auto id = r.opt_str(row, payload_id))
      refs.emplace_back(r.str(row, wf), *id);
  auto bodies = read_payloads(conn, refs);
  if (!bodies)
    return std::move(bodies.error());
  for (int row = 0; row < r.rows(); ++row) {
    auto& facts = out[r.str(row, wf)];
    auto type = r.text(row, event_type);
    boost::json::error_code ec;
    auto id = r.opt_str(row, payload_id);
    auto payload = boost::json::parse(id ? std::string_view{bodies->at(*id)}
                                         : r.text(row, payload_text),
                                      ec);
    const auto* obj = ec ? nullptr : payload.if_object();
    if (type == "SIGNAL_RECEIVED") {
      signal_row s;
      s.seq = r.i64(row, seq);
      s.at_ms = r.i64(row, at_ms);
      s.payload = "null";
      if (obj != nullptr) {
        if (const auto* n = obj->if_contains("name"); n != nullptr && n->is_string())
          s.name = std::string{n->get_string()};
        if (const auto* p = obj->if_contains("payload"))
          s.payload = boost::json::serialize(*p);
        if (const auto* ref = obj->if_contains("taskRef"); ref != nullptr && ref->is_string())
          s.task_ref = std::string{ref->get_string()};
        if (const auto* st = obj->if_contains("status"); st != nullptr && st->is_string())
          s.status = std::string{st->get_string()};
      }
      facts.signals.push_back(std::move(s));
    } else if (obj != nullptr) {
      const auto* reset = obj->if_contains("timeoutReset");
      if (reset != nullptr && reset->is_bool() && reset->get_bool())
        facts.timeout_reset_ms = r.i64(row, at_ms);
    }
  }
  return out;
}

caf::expected<std::map<std::string, history_facts>>
load_history_facts(transaction& tx, const std::vector<workflow_id>& ids) {
  if (ids.empty())
    return std::map<std::string, history_facts>{};
  pipeline p{tx.conn()};
  add_history_facts(p, ids);
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  return history_facts_of(tx.conn(), (*rs)[0]);
}

caf::expected<void> link_sub_workflows(transaction& tx,
                                       const std::vector<sub_workflow_link>& links) {
  if (links.empty())
    return {};
  auto r = tx.conn().run(
    link_children,
    params::of(ids_array(links, [](const auto& l) { return l.parent; }),
               ids_array(links, [](const auto& l) { return l.task; }),
               ids_array(links, [](const auto& l) { return l.child; })));
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<void> finish_sub_workflow_tasks(transaction& tx,
                                              const std::vector<sub_workflow_end>& ends) {
  if (ends.empty())
    return {};
  auto& conn = tx.conn();
  auto rows = conn.run(read_parent_tasks,
                       params::of(ids_array(ends, [](const auto& e) { return e.parent; }),
                                  ids_array(ends, [](const auto& e) { return e.task; })));
  if (!rows)
    return std::move(rows.error());
  const int ord = rows->column_named("ord"), status = rows->column_named("status"),
            scheduled_at = rows->column_named("scheduledAt"), ref = rows->column_named("refName"),
            iteration = rows->column_named("iteration"), attempt = rows->column_named("attempt"),
            ns_column = rows->column_named("namespaceId"),
            shard_column = rows->column_named("shard");
  transition_plan plan;
  for (int row = 0; row < rows->rows(); ++row) {
    const auto& e = ends[static_cast<size_t>(rows->i64(row, ord) - 1)];
    auto from = flow::parse_task_status(rows->text(row, status));
    if (from != flow::task_status::scheduled && from != flow::task_status::in_progress)
      continue; // already ended (canceled by a terminate, timed out, …)
    namespace_id ns{rows->str(row, ns_column)};
    auto shard = static_cast<int16_t>(rows->i64(row, shard_column));
    boost::json::object payload{{"status", flow::to_string(e.status)},
                                {"iteration", rows->i64(row, iteration)},
                                {"attempt", rows->i64(row, attempt)}};
    if (e.child)
      payload["subWorkflowId"] = e.child->str();
    if (e.reason)
      payload["reason"] = *e.reason;
    plan.wakes.push_back({e.parent, ns, shard, "subWorkflowEnded"});
    plan.finishes.push_back({e.parent, e.task, *from, e.status, e.output, e.reason,
                             rows->str(row, scheduled_at), std::nullopt});
    plan.events.push_back({e.parent, ns, shard,
                           e.status == flow::task_status::completed ? "TASK_COMPLETED"
                                                                    : "TASK_FAILED",
                           e.task, rows->str(row, ref), json(payload)});
  }
  if (plan.empty())
    return {};
  return apply_transition(conn, plan);
}

caf::expected<void> drop_decide_rows(transaction& tx, const std::vector<workflow_id>& ids) {
  if (ids.empty())
    return {};
  auto r = tx.conn().run(drop_rows, params::of(id_list(ids)));
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<std::set<std::string>> existing_workflows(connection& conn,
                                                        const std::vector<workflow_id>& ids) {
  std::set<std::string> out;
  if (ids.empty())
    return out;
  auto r = conn.run(existing, params::of(id_list(ids)));
  if (!r)
    return std::move(r.error());
  const int wf = r->column_named("wf");
  for (int row = 0; row < r->rows(); ++row)
    out.insert(r->str(row, wf));
  return out;
}

const statement& history_facts_statement() {
  return history_facts_read;
}

} // namespace nf::store
