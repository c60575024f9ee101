#include "flow/def_index.hpp"

namespace nf::flow {

def_index::def_index(const workflow_def& def) {
  add(def.tasks, nullptr, 0, nullptr, 0);
}

void def_index::add(const std::vector<workflow_task>& tasks, const workflow_task* parent,
                    std::size_t branch, const workflow_task* loop, std::size_t depth) {
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    by_ref_.emplace(t.task_reference_name, task_info{&t, parent, branch, loop, depth, &tasks, i});
    for (const auto& c : t.decision_cases)
      add(c.tasks, &t, 0, loop, depth);
    add(t.default_case, &t, 0, loop, depth);
    for (std::size_t b = 0; b < t.fork_tasks.size(); ++b)
      add(t.fork_tasks[b], &t, b, loop, depth);
    if (t.type == task_type::do_while) {
      add(t.loop_over, &t, 0, &t, depth + 1);
      subtree(t.loop_over, bodies_[&t]);
      frame_subtree(t.loop_over, frame_bodies_[&t]);
    }
  }
}

const task_info* def_index::find(std::string_view ref) const {
  auto it = by_ref_.find(ref);
  return it == by_ref_.end() ? nullptr : &it->second;
}

const std::vector<const workflow_task*>& def_index::body(const workflow_task* loop) const {
  static const std::vector<const workflow_task*> none;
  auto it = bodies_.find(loop);
  return it == bodies_.end() ? none : it->second;
}

const std::vector<const workflow_task*>& def_index::frame_body(const workflow_task* loop) const {
  static const std::vector<const workflow_task*> none;
  auto it = frame_bodies_.find(loop);
  return it == frame_bodies_.end() ? none : it->second;
}

void def_index::subtree(const std::vector<workflow_task>& tasks,
                        std::vector<const workflow_task*>& out) {
  for (const auto& t : tasks) {
    out.push_back(&t);
    for (const auto& c : t.decision_cases)
      subtree(c.tasks, out);
    subtree(t.default_case, out);
    for (const auto& b : t.fork_tasks)
      subtree(b, out);
    subtree(t.loop_over, out);
  }
}

void def_index::frame_subtree(const std::vector<workflow_task>& tasks,
                              std::vector<const workflow_task*>& out) {
  for (const auto& t : tasks) {
    out.push_back(&t);
    for (const auto& c : t.decision_cases)
      frame_subtree(c.tasks, out);
    frame_subtree(t.default_case, out);
    for (const auto& b : t.fork_tasks)
      frame_subtree(b, out);
  }
}

} // namespace nf::flow
