#include "store/tasks.hpp"

#include <set>

#include <boost/json.hpp>

#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {


// The plan's read, without locks; apply_transition re-checks it under them.
// "within": the latest a timer of the task can fire, in seconds after now(). Every timer a
// worker task has was armed at or before its lease, which is before now(): its
// scheduleToStart at most pollTimeoutSeconds after the task became due, its taskTimeout
// totalTimeoutSeconds after the first attempt was scheduled, its startToClose
// timeoutSeconds after the lease (flow/decide.cpp, store/queues.cpp). A definition
// changed since then can only leave a timer uncancelled, to fire as a no-op (I6).
// Each completion's task row and queue row are probed by its own keys, one index search
// each ("OFFSET 0" keeps the planner from turning the probes into joins). A generic plan is
// made once per connection, often while the queues are still empty, and kept while they
// fill: the batch's id arrays beside the keys let such a plan search the queue index for
// the whole batch once per row (a fan-out's 1,000 completions: ~400,000 buffers and ~1 s per
// call), and a join of the batch with its task rows compared every pair. A small batch's
// variant adds the workflow ids, so that it sets up only their partitions (pruning.hpp).
constexpr statement read_leases{"task.read_leases", R"(
SELECT t."namespaceId", t."refName", t."iteration", t."attempt", t."status"::text,
       t."queueName", t."scheduledAt", q."leaseToken", q."shard", d.within
  FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS u(wf, tid, ord)
  LEFT JOIN LATERAL (
    SELECT x."namespaceId", x."refName", x."iteration", x."attempt", x."status",
           x."queueName", x."scheduledAt", x."taskDefName"
      FROM "TaskExecutions" x WHERE x."workflowId" = u.wf AND x."id" = u.tid
       /*prune: AND x."workflowId" = ANY($1::uuid[]) */ OFFSET 0) t ON true
  LEFT JOIN LATERAL (
    SELECT y."leaseToken", y."shard" FROM "TaskQueues" y
     WHERE y."queueName" = t."queueName" AND y."taskId" = u.tid OFFSET 0) q ON true
  LEFT JOIN LATERAL (
    SELECT )" NF_TIMERS_WITHIN("dd") R"( AS within
      FROM "TaskDefinitions" dd
     WHERE dd."namespaceId" = t."namespaceId" AND dd."name" = t."taskDefName") d ON true
 ORDER BY u.ord)", 1};

// The rows both arrays find are exactly the pairs (decide.mark_seen,
// store/decision_apply.cpp).
constexpr statement unsee{"task.unsee", R"(
UPDATE "TaskExecutions" t SET "deciderSeenAt" = NULL
 WHERE t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[]))", 1};

flow::task_status status_of(task_outcome o) {
  switch (o) {
    case task_outcome::completed: return flow::task_status::completed;
    case task_outcome::failed: return flow::task_status::failed;
    case task_outcome::failed_terminal: return flow::task_status::failed_with_terminal_error;
  }
  return flow::task_status::failed;
}

} // namespace

void add_completion_read(pipeline& p, const std::vector<task_result>& rs) {
  p.add(read_leases, params::of(ids_array(rs, [](const auto& r) { return r.workflow; }),
                                ids_array(rs, [](const auto& r) { return r.task; })));
}

std::string scheduled_bound_of_lease(int64_t leased_ms) {
  return timestamptz_text(leased_ms - 60000);
}

std::vector<std::optional<lease_facts>> lease_facts_of(const std::vector<task_result>& rs,
                                                       const result& read,
                                                       std::vector<completion>& answers) {
  std::vector<std::optional<lease_facts>> out(rs.size());
  answers.assign(rs.size(), completion::done);
  const int ns = read.column_named("namespaceId"), ref = read.column_named("refName"),
            iteration = read.column_named("iteration"), attempt = read.column_named("attempt"),
            status = read.column_named("status"), queue = read.column_named("queueName"),
            scheduled_at = read.column_named("scheduledAt"),
            token = read.column_named("leaseToken"), shard = read.column_named("shard"), within = read.column_named("within");
  for (int i = 0; i < read.rows(); ++i) {
    const auto& r = rs[static_cast<size_t>(i)];
    auto& answer = answers[static_cast<size_t>(i)];
    // A task of another namespace is as unknown as one that never was.
    if (read.is_null(i, ns) || (r.ns && read.text(i, ns) != r.ns->str())) {
      answer = completion::not_found;
      continue;
    }
    // I5: only the current lease of an IN_PROGRESS task may finish it.
    if (read.is_null(i, token) || read.text(i, token) != r.token.str()
        || read.text(i, status) != "IN_PROGRESS") {
      answer = completion::lease_lost;
      continue;
    }
    out[static_cast<size_t>(i)] =
      lease_facts{r.workflow,
                  r.task,
                  r.token,
                  namespace_id{read.str(i, ns)},
                  static_cast<int16_t>(read.i64(i, shard)),
                  read.str(i, queue),
                  flow::task_identity{read.str(i, ref), read.i32(i, iteration),
                                      read.i32(i, attempt)},
                  read.str(i, scheduled_at),
                  read.opt_i64(i, within)};
  }
  return out;
}

completion_writes add_completion_writes(pipeline& p, const std::vector<task_result>& rs,
                                        const result& read, bool evaluated_here,
                                        const std::set<workflow_id>& decided_here,
                                        bool defer_events) {
  std::vector<completion> answers;
  auto facts = lease_facts_of(rs, read, answers);
  return add_completion_writes(p, rs, facts, std::move(answers), evaluated_here, decided_here,
                               defer_events);
}

completion_writes add_completion_writes(pipeline& p, const std::vector<task_result>& rs,
                                        const std::vector<std::optional<lease_facts>>& facts,
                                        std::vector<completion> answers, bool evaluated_here,
                                        const std::set<workflow_id>& decided_here,
                                        bool defer_events) {
  completion_writes w;
  w.answers = std::move(answers);
  auto& plan = w.plan;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (!facts[i])
      continue;
    const auto& r = rs[i];
    const auto& f = *facts[i];
    auto status = status_of(r.outcome);
    boost::json::object payload{{"status", flow::to_string(status)},
                                {"iteration", f.identity.iteration},
                                {"attempt", f.identity.attempt}};
    if (r.reason)
      payload["reason"] = *r.reason;
    if (decided_here.count(r.workflow) == 0)
      plan.wakes.push_back(decider_wake{r.workflow, f.ns, f.shard,
                                        r.outcome == task_outcome::completed ? "taskCompleted"
                                                                             : "taskFailed"});
    plan.removals.push_back(queue_removal{f.queue, r.task, r.token, false});
    plan.finishes.push_back(task_finish{r.workflow, r.task, flow::task_status::in_progress, status, r.output,
                                        r.reason, f.scheduled_at, f.timers_within_s,
                                        evaluated_here});
    const char* type = r.outcome == task_outcome::completed ? "TASK_COMPLETED" : "TASK_FAILED";
    if (defer_events && decided_here.count(r.workflow) != 0) {
      auto& later = w.deferred[r.workflow.str()];
      if (later.empty())
        plan.locked.push_back(r.workflow);
      // Published as add_events publishes it (event_write::outbox_shard).
      later.push_back(event_write{type, r.task, f.identity, json(payload), f.shard});
      continue;
    }
    plan.events.push_back(event_draft{r.workflow, f.ns, f.shard, type, r.task, f.identity.ref,
                                      json(payload)});
  }
  w.at = add_transition(p, plan);
  return w;
}

caf::expected<void> check_completions(const std::vector<task_result>& rs) {
  if (rs.size() > max_completions_per_batch)
    return make_error(errc::invalid, "results: expected at most "
                                       + std::to_string(max_completions_per_batch)
                                       + " tasks per batch, got " + std::to_string(rs.size()));
  std::set<std::string> seen;
  for (size_t i = 0; i < rs.size(); ++i)
    if (!seen.insert(rs[i].task.str()).second)
      return make_error(errc::invalid, "results[" + std::to_string(i) + "].task: task "
                                         + rs[i].task.str() + " appears twice in one batch");
  return {};
}

caf::expected<std::vector<completion>> complete_tasks(transaction& tx,
                                                      const std::vector<task_result>& rs,
                                                      bool evaluated_here,
                                                      const std::set<workflow_id>& decided_here) {
  if (auto c = check_completions(rs); !c)
    return std::move(c.error());
  if (rs.empty())
    return std::vector<completion>{};
  pipeline p{tx.conn()};
  add_completion_read(p, rs);
  auto read = p.run();
  if (!read)
    return std::move(read.error());
  pipeline writes{tx.conn()};
  auto w = add_completion_writes(writes, rs, read->front(), evaluated_here, decided_here);
  if (auto a = run_transition(writes, w.plan, w.at); !a)
    return std::move(a.error());
  return std::move(w.answers);
}

caf::expected<void> unsee_tasks(transaction& tx, const std::vector<task_result>& rs) {
  if (rs.empty())
    return {};
  // Outside the transaction that stamped them, the ends would have committed seen (I3).
  if (!tx.active())
    return make_error(errc::internal, "unsee_tasks: the transaction that stamped the ends "
                                      "has ended (committed with the decisions' writes?)");
  auto r = tx.conn().run(unsee, params::of(ids_array(rs, [](const auto& x) { return x.workflow; }),
                                           ids_array(rs, [](const auto& x) { return x.task; })));
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<std::vector<completion>> complete_tasks(connection& conn,
                                                      const std::vector<task_result>& rs) {
  return perform_replanning(conn, [&](transaction& tx) { return complete_tasks(tx, rs); });
}

caf::expected<void> complete_task(connection& conn, const task_result& r) {
  auto out = complete_tasks(conn, {r});
  if (!out)
    return std::move(out.error());
  switch (out->front()) {
    case completion::done: return {};
    case completion::lease_lost: return make_error(errc::lease_lost, "lease lost");
    case completion::not_found:
      return make_error(errc::not_found, "task " + r.task.str() + " of workflow "
                                           + r.workflow.str() + " not found");
  }
  return {};
}

} // namespace nf::store
