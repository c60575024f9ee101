#include "flow/apply.hpp"

#include <algorithm>

namespace nf::flow {

namespace {

task_execution* find_row(snapshot& s, const task_identity& id) {
  for (auto it = s.tasks.rbegin(); it != s.tasks.rend(); ++it)
    if (it->id == id)
      return &*it;
  return nullptr;
}

void insert(snapshot& s, const scheduled_task& st, time_ms now) {
  task_execution e;
  e.id = st.id;
  e.type = st.type;
  e.task_def_name = st.task_def_name;
  e.status = st.status;
  e.input = st.input;
  e.output = st.output;
  e.reason_for_incompletion = st.reason_for_incompletion;
  e.scheduled_time = now;
  e.start_delay_ms = st.start_delay_ms;
  e.task_id = st.task_id;
  if (st.status != task_status::scheduled)
    e.start_time = now;
  if (is_terminal(st.status))
    e.end_time = now;
  s.tasks.push_back(std::move(e));
}

void change(snapshot& s, const task_update& u, time_ms now) {
  task_execution* e = find_row(s, u.id);
  if (e == nullptr)
    return;
  e->status = u.status;
  if (u.output)
    e->output = *u.output;
  e->reason_for_incompletion = u.reason_for_incompletion;
  e->end_time = is_terminal(u.status) ? now : 0;
}

}  // namespace

snapshot apply(snapshot s, const decision& d, time_ms now) {
  for (const auto& st : d.schedule)
    insert(s, st, now);
  for (const auto& u : d.updates)
    change(s, u, now);
  for (const auto& kv : d.variables)
    s.variables[kv.key()] = kv.value();
  if (d.status) {
    s.status = *d.status;
    s.output = d.output;
    s.reason_for_incompletion = d.reason_for_incompletion;
  }
  return s;
}

snapshot apply(snapshot s, const edit& e, time_ms now) {
  auto removed = [&](const task_execution& x) {
    return std::find(e.remove.begin(), e.remove.end(), x.id) != e.remove.end();
  };
  s.tasks.erase(std::remove_if(s.tasks.begin(), s.tasks.end(), removed), s.tasks.end());
  for (const auto& u : e.updates)
    change(s, u, now);
  for (const auto& u : e.finish)
    change(s, u, now);
  for (const auto& st : e.schedule)
    insert(s, st, now);
  s.status = e.status;
  s.output = {};
  s.reason_for_incompletion.clear();
  if (e.input)
    s.input = *e.input;
  if (e.variables)
    s.variables = *e.variables;
  if (e.start_time)
    s.start_time = *e.start_time;
  return s;
}

} // namespace nf::flow
