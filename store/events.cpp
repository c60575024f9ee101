#include "store/events.hpp"

#include <algorithm>
#include <map>

#include <boost/json/value.hpp>

#include "store/event_seq.hpp"
#include "store/json.hpp"
#include "store/payloads.hpp"
#include "proto/errors.hpp"

namespace nf::store {

namespace {

// The insert of events whose seqs are known. "at" is the clock when the row is made, after
// the workflow's row lock was taken (not now(), the transaction's start): so "at" grows
// with "seq", and an event caused by another transaction's commit is later than the events
// of that transaction (a lease that took the slot a completion freed starts after it).
// The task id of an event named by identity is looked up when the event is written (so a
// task inserted earlier in the transaction is found), by a scalar subquery: it runs per event
// as an index probe of one partition, where a join could be planned as a hash of scanned
// partitions while the tables are small, a plan that stays cached as they grow. A small
// batch's variant also bounds it by the events' workflow ids, so it sets up only their
// partitions (the `prune:` comment, store/pg/pruning.hpp); the statement as written must
// not: a probe would search the index once per id of the whole batch.
#define NF_EVENTS_INSERT(seq, ns, wfs)                                                        \
  R"(INSERT INTO "WorkflowEvents")"                                                           \
  R"( ("workflowId", "seq", "at", "namespaceId", "eventType", "taskId", "refName", "payload"))" \
  R"( SELECT e.wf, )" seq R"(, clock_timestamp(), )" ns R"(, e.type::workflow_event_type,)"    \
  R"( COALESCE(e.task, (SELECT x."id" FROM "TaskExecutions" x)"                               \
  R"( WHERE e.iter IS NOT NULL AND x."workflowId" = e.wf AND x."refName" = e.ref)"            \
  R"( AND x."iteration" = e.iter AND x."attempt" = e.att /*prune: AND x."workflowId" = ANY()" \
  wfs R"(::uuid[]) */)), e.ref, e.payload)"

// docs/schema.md §4.1: the seq allocation and the inserts are one statement;
// the UPDATE's row lock serialises every writer of the workflow until commit,
// so seqs are gap-free and unique (I8) and no clock is read.
constexpr statement append{"events.append", R"(
WITH s AS (
  UPDATE "WorkflowExecutions" w SET )" NF_ALLOCATE_SEQS("u.n") R"(, "updatedAt" = now()
    FROM unnest($1::uuid[], $2::integer[]) AS u(id, n)
   WHERE w."id" = u.id AND w."startedAt" = uuid_extract_timestamp(u.id) AND w."id" = ANY($1::uuid[])
     /*started: w."startedAt" */
  RETURNING w."id", w."lastSeq", w."namespaceId", u.n),
i AS ()" NF_EVENTS_INSERT(R"(s."lastSeq" - s.n + e.k)", R"(s."namespaceId")", "$3") R"(
    FROM unnest($3::uuid[], $4::integer[], $5::text[], $6::uuid[], $7::text[], $8::integer[],
                $9::integer[], $10::jsonb[]) AS e(wf, k, type, task, ref, iter, att, payload)
    JOIN s ON s."id" = e.wf)
SELECT "id", "lastSeq" FROM s)", 3, 1};

// Each workflow's "lastSeq", read once from the row this transaction's decision updated and
// holds locked (the decision's compare-and-set adds each workflow's event count `n` to it):
// `ids` names each workflow once, and an event's `slot` is its workflow's place in `ids`, so
// the array the subquery makes (once per statement: it is uncorrelated) holds its
// "lastSeq" there. A probe per event instead read the execution row again for each of a
// workflow's events. A row not found is a NULL that the insert refuses, never a shifted
// array.
#define NF_LAST_SEQS(ids)                                                                     \
  R"((SELECT array_agg(w."lastSeq" ORDER BY u.ord))"                                          \
  R"( FROM unnest()" ids R"(::uuid[]) WITH ORDINALITY AS u(wf, ord))"                         \
  R"( LEFT JOIN LATERAL (SELECT we."lastSeq" FROM "WorkflowExecutions" we)"                   \
  R"( WHERE we."id" = u.wf AND we."startedAt" = uuid_extract_timestamp(u.wf))"                \
  R"( /*started: we."startedAt" */ OFFSET 0) w ON true))"

// The same insert when the caller allocated the seqs under the row lock already: event k
// of n takes "lastSeq" - n + k. Read here rather than returned by the compare-and-set, so
// that the decision's writes go in the compare-and-set's round trip.
constexpr statement insert_numbered{"events.insert_numbered",
  NF_EVENTS_INSERT(NF_LAST_SEQS("$11") R"([e.slot] - e.n + e.k)", "e.ns", "$1") R"(
    FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::uuid[], $5::text[], $6::uuid[],
                $7::text[], $8::integer[], $9::integer[], $10::jsonb[], $12::integer[])
      AS e(wf, k, n, ns, type, task, ref, iter, att, payload, slot))", 1, 11};

// The same, when some events are published as add_events publishes its own
// (store/task_transitions.cpp): from the stored row, whose "at" only the insert knows, in
// the shard $11 names (NULL: the event's outbox row is the decision's, decide.outbox), and
// only while a webhook sink is enabled (store/decision_apply.cpp, decide.outbox).
constexpr statement insert_numbered_published{"events.insert_numbered_published", R"(
WITH e AS MATERIALIZED (
  SELECT e.*, )" NF_LAST_SEQS("$12") R"([e.slot] - e.n + e.k AS seq
    FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::uuid[], $5::text[], $6::uuid[],
                $7::text[], $8::integer[], $9::integer[], $10::jsonb[], $11::smallint[],
                $13::integer[])
      AS e(wf, k, n, ns, type, task, ref, iter, att, payload, shard, slot)),
i AS ()" NF_EVENTS_INSERT("e.seq", "e.ns", "$1") R"( FROM e
  RETURNING "workflowId", "seq", "at", "namespaceId", "eventType", "taskId", "refName", "payload")
INSERT INTO "OutboxEvents" ("shard", "namespaceId", "workflowId", "eventType", "payload",
                            "publishedAt")
SELECT e.shard, i."namespaceId", i."workflowId", i."eventType"::text,
       jsonb_build_object('workflowId', i."workflowId", 'seq', i."seq", 'at', i."at",
                          'taskId', i."taskId", 'refName', i."refName", 'data', i."payload"),
       NULL::timestamptz
  FROM i JOIN e ON e.wf = i."workflowId" AND e.seq = i."seq"
 WHERE e.shard IS NOT NULL AND (SELECT "outbox_published_at"()) IS NULL)", 1, 12};

#undef NF_LAST_SEQS
#undef NF_EVENTS_INSERT

// docs/schema.md §4.7: the "at" bound prunes months before the workflow began
// (with a margin: the start event's "at" is its transaction's start).
constexpr statement history{"events.history", R"(
SELECT "seq", (extract(epoch FROM "at") * 1000)::bigint AS at_ms, "eventType", "taskId",
       "refName", "payload", "payloadId"
  FROM "WorkflowEvents"
 WHERE "workflowId" = $1 AND "seq" > $2
   AND "at" >= uuid_extract_timestamp($1) - interval '1 day'
 ORDER BY "seq" LIMIT $3)"};

/// The per-event columns of both inserts.
struct event_columns {
  std::vector<std::string> wf, types;
  std::vector<int64_t> ks;
  std::vector<std::optional<std::string>> tasks, refs, iters, attempts;
  std::vector<json_text> payloads;

  void add(const std::string& workflow, int64_t k, const event_write& e) {
    static const auto empty = json(boost::json::object{});
    wf.push_back(workflow);
    ks.push_back(k);
    types.push_back(e.type);
    tasks.push_back(e.task ? std::optional<std::string>{e.task->str()} : std::nullopt);
    refs.push_back(e.identity ? std::optional<std::string>{e.identity->ref} : std::nullopt);
    iters.push_back(e.identity ? std::optional<std::string>{std::to_string(e.identity->iteration)}
                               : std::nullopt);
    attempts.push_back(e.identity ? std::optional<std::string>{std::to_string(e.identity->attempt)}
                                  : std::nullopt);
    payloads.push_back(e.payload ? *e.payload : empty);
  }
};

/// Events grouped per workflow (a workflow named twice is merged, keeping
/// order, so one UPDATE allocates all its seqs).
struct grouped {
  std::vector<std::string> ids;
  std::vector<int64_t> counts;
  std::vector<size_t> slot_of_input;  ///< input index → index in `ids`
  params p;
};

grouped group(const std::vector<workflow_events>& batch) {
  grouped g;
  std::map<std::string, size_t> slot;
  for (const auto& w : batch) {
    auto [it, fresh] = slot.emplace(w.id.str(), g.ids.size());
    if (fresh) {
      g.ids.push_back(w.id.str());
      g.counts.push_back(0);
    }
    g.slot_of_input.push_back(it->second);
  }
  event_columns c;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto s = g.slot_of_input[i];
    for (const auto& e : batch[i].events)
      c.add(g.ids[s], ++g.counts[s], e);
  }
  g.p = params::of(text_array(g.ids), int_array(g.counts), text_array(c.wf), int_array(c.ks),
                   text_array(c.types), text_array(c.tasks), text_array(c.refs),
                   text_array(c.iters), text_array(c.attempts), json_array(c.payloads));
  return g;
}

bool has_events(const std::vector<workflow_events>& batch) {
  return std::any_of(batch.begin(), batch.end(),
                     [](const workflow_events& w) { return !w.events.empty(); });
}

} // namespace

caf::expected<std::vector<int64_t>> append_events(transaction& tx,
                                                  const std::vector<workflow_events>& batch) {
  if (!has_events(batch))
    return std::vector<int64_t>(batch.size(), 0);
  auto g = group(batch);
  auto r = tx.conn().run(append, g.p);
  if (!r)
    return std::move(r.error());
  std::map<std::string, int64_t> last;
  const int id = r->column_named("id"), last_seq = r->column_named("lastSeq");
  for (int row = 0; row < r->rows(); ++row)
    last[r->str(row, id)] = r->i64(row, last_seq);
  std::vector<int64_t> out;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto it = last.find(g.ids[g.slot_of_input[i]]);
    if (it == last.end())
      return make_error(errc::not_found, "workflow " + batch[i].id.str() + " not found");
    out.push_back(it->second);
  }
  return out;
}

bool append_events(pipeline& p, const std::vector<workflow_events>& batch) {
  if (!has_events(batch))
    return false;
  p.add(append, group(batch).p);
  return true;
}

bool insert_numbered_events(pipeline& p, const std::vector<numbered_events>& batch) {
  event_columns c;
  std::vector<std::string> nss;
  std::vector<int64_t> counts;
  // Each workflow once (a decision writes one entry per workflow), and each event's place
  // in that list: the statement reads a workflow's "lastSeq" once for all its events.
  std::vector<std::string> ids;
  std::vector<int64_t> slots;
  for (const auto& w : batch) {
    if (w.events.empty())
      continue;
    ids.push_back(w.id.str());
    int64_t k = 0;
    for (const auto& e : w.events) {
      c.add(w.id.str(), ++k, e);
      nss.push_back(w.ns.str());
      counts.push_back(static_cast<int64_t>(w.events.size()));
      slots.push_back(static_cast<int64_t>(ids.size()));
    }
  }
  if (c.wf.empty())
    return false;
  auto p_events = params::of(text_array(c.wf), int_array(c.ks), int_array(counts),
                             text_array(nss), text_array(c.types), text_array(c.tasks),
                             text_array(c.refs), text_array(c.iters), text_array(c.attempts),
                             json_array(c.payloads));
  std::vector<std::optional<std::string>> shards;
  bool published = false;
  for (const auto& w : batch)
    for (const auto& e : w.events) {
      shards.push_back(e.outbox_shard
                         ? std::optional<std::string>{std::to_string(*e.outbox_shard)}
                         : std::nullopt);
      published = published || e.outbox_shard.has_value();
    }
  if (published)
    p_events.add(text_array(shards));
  p_events.add(text_array(ids));
  p_events.add(int_array(slots));
  p.add(published ? insert_numbered_published : insert_numbered, std::move(p_events));
  return true;
}

caf::expected<std::vector<event_row>> read_events(connection& conn, const workflow_id& id,
                                                  int64_t after_seq, int limit) {
  limit = std::clamp(limit, 1, max_events_per_read);
  auto r = conn.run(history, params::of(id, after_seq, int64_t{limit}));
  if (!r)
    return std::move(r.error());
  std::vector<event_row> out;
  out.reserve(static_cast<size_t>(r->rows()));
  const int seq = r->column_named("seq"), at_ms = r->column_named("at_ms"),
            type = r->column_named("eventType"), task = r->column_named("taskId"),
            ref = r->column_named("refName"), payload = r->column_named("payload"),
            payload_id = r->column_named("payloadId");
  // Payloads stored out of line (store/payloads.hpp), read only when the page has any.
  std::vector<std::pair<std::string, std::string>> refs;
  for (int row = 0; row < r->rows(); ++row)
    if (auto pid = r->opt_str(row, payload_id))
      refs.emplace_back(id.str(), *pid);
  auto bodies = read_payloads(conn, refs);
  if (!bodies)
    return std::move(bodies.error());
  for (int row = 0; row < r->rows(); ++row) {
    event_row e;
    e.seq = r->i64(row, seq);
    e.at_ms = r->i64(row, at_ms);
    e.type = r->str(row, type);
    if (auto t = r->opt_str(row, task))
      e.task = task_id{*t};
    e.ref_name = r->opt_str(row, ref);
    auto pid = r->opt_str(row, payload_id);
    e.payload = pid ? bodies->at(*pid) : r->str(row, payload);
    out.push_back(std::move(e));
  }
  return out;
}

} // namespace nf::store
