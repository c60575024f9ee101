#include "net/web/routes/blocking.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "net/web/conductor_shapes.hpp"
#include "net/web/errors.hpp"
#include "net/web/json_body.hpp"
#include "net/web/routes/workflow_calls.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// Sub-workflows nested deeper than this are not searched: a chain that deep is a definition
// calling itself, and each level costs a read.
constexpr int max_depth = 8;
// At most this many sub-workflows are read per search: a synchronous answer searches again
// every second or so, and a fan-out of sub-workflows would cost a read each time for each.
constexpr int max_reads = 64;

bool pending(const json::object& task) {
  auto status = text_field(task, "status");
  return status == "SCHEDULED" || status == "IN_PROGRESS";
}

// A WAIT for a duration or until a time (flow/system_tasks.cpp: plan_wait).
bool timed(const json::object& task) {
  const auto* in = task.if_contains("input");
  const auto* o = in != nullptr ? in->if_object() : nullptr;
  if (o == nullptr)
    return false;
  for (const char* key : {"duration", "until"})
    if (const auto* v = o->if_contains(key); v != nullptr && !v->is_null())
      return true;
  return false;
}

// Searches `wf`'s own tasks, then the running sub-workflows in `subs[next…]` one after the
// other; each sub-workflow is searched whole (its own sub-workflows included) before the next.
struct search : std::enable_shared_from_this<search> {
  gateway* api;
  exchange_ptr ex;
  bool timed_waits = false;
  std::string skip;
  std::function<void(std::optional<blocking_point>)> found;
  std::shared_ptr<int> reads_left = std::make_shared<int>(max_reads);

  void in(const json::object& wf, int depth) {
    std::vector<std::string> subs;
    if (const auto* tasks = wf.if_contains("tasks"); tasks != nullptr && tasks->is_array())
      for (const auto& v : tasks->as_array()) {
        const auto* t = v.if_object();
        if (t == nullptr || !pending(*t))
          continue;
        auto type = text_field(*t, "taskType");
        if (type == "WAIT" && text_field(*t, "taskId") != skip && (timed_waits || !timed(*t)))
          return found(blocking_point{wf, *t});
        if (type == "SUB_WORKFLOW" && !text_field(*t, "subWorkflowId").empty())
          subs.push_back(text_field(*t, "subWorkflowId"));
      }
    if (depth >= max_depth)
      subs.clear();
    in_subs(std::make_shared<std::vector<std::string>>(std::move(subs)), 0, depth,
            std::move(found));
  }

  void in_subs(std::shared_ptr<std::vector<std::string>> subs, size_t next, int depth,
               std::function<void(std::optional<blocking_point>)> done) {
    if (next == subs->size() || *reads_left <= 0)
      return done(std::nullopt);
    --*reads_left;
    auto self = shared_from_this();
    auto after = [self, subs, next, depth, done](std::optional<blocking_point> point) {
      if (point)
        return done(std::move(point));
      self->in_subs(subs, next + 1, depth, done);
    };
    read_execution_or(
      api, ex, (*subs)[next], true,
      [self, depth, after](const json::object& sub) {
        auto nested = std::make_shared<search>(*self);
        nested->found = after;
        nested->in(sub, depth + 1);
      },
      [self, after](caf::error& e) {
        // A sub-workflow removed since its parent was read waits on nothing.
        if (status_of(e) == 404)
          return after(std::nullopt);
        self->ex->fail(e);
      });
  }
};

json::object task_fields(const blocking_point& p) {
  int64_t seq = 0;
  if (const auto* tasks = p.workflow.if_contains("tasks"); tasks != nullptr && tasks->is_array()) {
    const auto& arr = tasks->as_array();
    auto id = text_field(p.task, "taskId");
    auto it = std::find_if(arr.begin(), arr.end(), [&](const json::value& v) {
      return v.is_object() && text_field(v.as_object(), "taskId") == id;
    });
    seq = static_cast<int64_t>(it - arr.begin()) + 1;
  }
  return task_shape(p.task, p.workflow, seq, false);
}

} // namespace

std::string text_field(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string{v->get_string()} : std::string{};
}

void find_blocking_wait(gateway* api, const exchange_ptr& ex, const json::object& wf,
                        bool timed_waits, std::string skip_task_id,
                        std::function<void(std::optional<blocking_point>)> found) {
  auto s = std::make_shared<search>();
  s->api = api;
  s->ex = ex;
  s->timed_waits = timed_waits;
  s->skip = std::move(skip_task_id);
  s->found = std::move(found);
  s->in(wf, 0);
}

std::optional<return_strategy> read_return_strategy(const exchange_ptr& ex) {
  const auto* v = ex->query("returnStrategy");
  if (v == nullptr || v->empty() || *v == "TARGET_WORKFLOW")
    return return_strategy::target_workflow;
  if (*v == "BLOCKING_WORKFLOW")
    return return_strategy::blocking_workflow;
  if (*v == "BLOCKING_TASK")
    return return_strategy::blocking_task;
  if (*v == "BLOCKING_TASK_INPUT")
    return return_strategy::blocking_task_input;
  ex->fail(400, "returnStrategy: expected TARGET_WORKFLOW, BLOCKING_WORKFLOW, BLOCKING_TASK or "
                "BLOCKING_TASK_INPUT, got \"" + *v + "\"",
           "returnStrategy");
  return std::nullopt;
}

json::object signal_response(return_strategy strategy, const json::object& target,
                             const std::optional<blocking_point>& point) {
  json::object o;
  const char* type = "TARGET_WORKFLOW";
  if (!point || strategy == return_strategy::target_workflow) {
    o = workflow_shape(target, true);
  } else if (strategy == return_strategy::blocking_workflow) {
    type = "BLOCKING_WORKFLOW";
    o = workflow_shape(point->workflow, true);
  } else {
    auto task = task_fields(*point);
    o["workflowId"] = task["workflowInstanceId"];
    o["taskId"] = task["taskId"];
    o["referenceTaskName"] = task["referenceTaskName"];
    o["input"] = task["inputData"];
    if (strategy == return_strategy::blocking_task) {
      type = "BLOCKING_TASK";
      o["taskType"] = task["taskType"];
      o["taskDefName"] = task["taskDefName"];
      o["status"] = task["status"];
      o["output"] = task["outputData"];
      o["retryCount"] = task["retryCount"];
      o["seq"] = task["seq"];
      o["workflowType"] = task["workflowType"];
      o["correlationId"] = task["correlationId"];
      o["scheduledTime"] = task["scheduledTime"];
      o["startTime"] = task["startTime"];
      o["updateTime"] = task["updateTime"];
    } else {
      type = "BLOCKING_TASK_INPUT";
    }
  }
  o["responseType"] = type;
  o["targetWorkflowId"] = target.contains("workflowId") ? target.at("workflowId") : nullptr;
  o["targetWorkflowStatus"] = target.contains("status") ? target.at("status") : nullptr;
  return o;
}

namespace {

bool has_running_sub_workflow(const json::object& wf) {
  const auto* tasks = wf.if_contains("tasks");
  if (tasks == nullptr || !tasks->is_array())
    return false;
  for (const auto& v : tasks->as_array())
    if (const auto* t = v.if_object();
        t != nullptr && pending(*t) && text_field(*t, "taskType") == "SUB_WORKFLOW")
      return true;
  return false;
}

struct blocked_wait : std::enable_shared_from_this<blocked_wait> {
  gateway* api;
  exchange_ptr ex;
  std::string id;
  std::chrono::steady_clock::time_point deadline;
  int64_t max_wait_ms;
  std::string skip;
  std::function<bool(const json::object&)> reached;
  std::function<void(const json::object&, const std::optional<blocking_point>&)> answer;
  std::shared_ptr<history_wait> history;

  void check() {
    auto self = shared_from_this();
    read_execution(api, ex, id, [self](const json::object& wf) {
      if (is_ended(wf))
        return self->answer(wf, std::nullopt);
      auto target = std::make_shared<json::object>(wf);
      // The workflow's own history wakes the wait when its tasks change; a sub-workflow's
      // does not, so with one running the workflow is read again every second.
      int64_t wait_ms = has_running_sub_workflow(wf) ? std::min<int64_t>(self->max_wait_ms, 1000)
                                                     : self->max_wait_ms;
      find_blocking_wait(self->api, self->ex, wf, false, self->skip,
                         [self, target, wait_ms](std::optional<blocking_point> point) {
                           if (point || self->reached(*target)
                               || std::chrono::steady_clock::now() >= self->deadline)
                             return self->answer(*target, point);
                           self->history->wait(self->deadline, wait_ms,
                                               [self] { self->check(); });
                         });
    });
  }
};

} // namespace

void wait_until_blocked(gateway* api, const exchange_ptr& ex, const std::string& id,
                        std::chrono::steady_clock::time_point deadline, int64_t max_wait_ms,
                        std::string skip_task_id,
                        std::function<bool(const json::object&)> reached,
                        std::function<void(const json::object&,
                                           const std::optional<blocking_point>&)> answer) {
  auto w = std::make_shared<blocked_wait>();
  w->api = api;
  w->ex = ex;
  w->id = id;
  w->deadline = deadline;
  w->max_wait_ms = max_wait_ms;
  w->skip = std::move(skip_task_id);
  w->reached = std::move(reached);
  w->answer = std::move(answer);
  w->history = std::make_shared<history_wait>(api, ex, id);
  w->check();
}

std::vector<param_doc> sync_answer_params(std::vector<param_doc> more) {
  std::vector<param_doc> out{
    {"requestId", "echoed in the answer", false},
    {"waitUntilTaskRef",
     "task reference names, separated by commas: answered once one of them is scheduled (a "
     "loop's iteration as Conductor names it, \"ref__2\", or any iteration by the plain name)",
     false},
    {"waitForSeconds", "0 … 600 (default 10)", false, "integer"}};
  out.insert(out.end(), std::make_move_iterator(more.begin()),
             std::make_move_iterator(more.end()));
  return out;
}

std::optional<sync_answer> read_sync_answer(const exchange_ptr& ex) {
  sync_answer w;
  w.refs = task_refs(ex->query("waitUntilTaskRef"));
  auto secs = query_int(ex, "waitForSeconds", 10, 0, 600);
  if (!secs)
    return std::nullopt;
  w.deadline = std::chrono::steady_clock::now() + std::chrono::seconds{*secs};
  if (const auto* rid = ex->query("requestId"))
    w.request_id = *rid;
  return w;
}

void answer_when_blocked(gateway* api, const exchange_ptr& ex, const std::string& id,
                         const sync_answer& w, int64_t max_wait_ms, return_strategy strategy) {
  wait_until_blocked(
    api, ex, id, w.deadline, max_wait_ms, {},
    [refs = w.refs](const json::object& wf) { return has_task(wf, refs); },
    [ex, strategy, request_id = w.request_id](const json::object& wf,
                                              const std::optional<blocking_point>& p) {
      auto out = signal_response(strategy, wf, p);
      if (!request_id.empty())
        out["requestId"] = request_id;
      ex->respond_json(200, out);
    });
}

std::vector<std::string> task_refs(const std::string* text) {
  std::vector<std::string> refs;
  if (text == nullptr)
    return refs;
  size_t at = 0;
  while (at <= text->size()) {
    auto comma = std::min(text->find(',', at), text->size());
    auto ref = text->substr(at, comma - at);
    ref.erase(0, ref.find_first_not_of(' '));
    ref.erase(ref.find_last_not_of(' ') + 1);
    if (!ref.empty())
      refs.push_back(std::move(ref));
    at = comma + 1;
  }
  return refs;
}

bool has_task(const json::object& wf, const std::vector<std::string>& refs) {
  const auto* tasks = wf.if_contains("tasks");
  if (refs.empty() || tasks == nullptr || !tasks->is_array())
    return false;
  for (const auto& v : tasks->as_array()) {
    const auto* t = v.if_object();
    const auto* ref = t ? t->if_contains("referenceTaskName") : nullptr;
    if (ref == nullptr || !ref->is_string())
      continue;
    std::string plain{ref->get_string()};
    const auto* it = t->if_contains("iteration");
    auto shown = conductor_ref(plain, it && it->is_int64() ? it->get_int64() : 0);
    for (const auto& want : refs)
      if (want == plain || want == shown)
        return true;
  }
  return false;
}

} // namespace nf::net::web
