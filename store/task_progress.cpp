#include "store/task_progress.hpp"

#include "store/api_reads.hpp"
#include "store/json.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

caf::expected<void> record_task_progress(connection& conn, const workflow_id& wf,
                                            const task_id& task,
                                            const boost::json::value& payload) {
  auto text = json(payload);
  return perform_replanning(conn, [&](transaction&) -> caf::expected<void> {
    auto h = read_execution_header(conn, wf);
    if (!h)
      return std::move(h.error());
    // The task must be the workflow's: task_response_timeout is `not_found` otherwise.
    if (auto t = task_response_timeout(conn, wf, task, h->ns); !t)
      return std::move(t.error());
    transition_plan plan;
    plan.events.push_back({wf, h->ns, h->shard, "TASK_IN_PROGRESS", task, std::nullopt, text});
    return apply_transition(conn, plan);
  });
}

} // namespace nf::store
