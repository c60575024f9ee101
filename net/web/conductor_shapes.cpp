#include "net/web/conductor_shapes.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <tuple>

#include <boost/json.hpp>

namespace nf::net::web {

namespace json = boost::json;

namespace {

const json::value& field(const json::object& o, const char* name) {
  static const json::value null_value;
  const auto* v = o.if_contains(name);
  return v ? *v : null_value;
}

// A time the engine leaves null until it happens: Conductor's longs are 0 then.
int64_t ms_or_zero(const json::value& v) {
  if (v.is_int64())
    return v.as_int64();
  if (v.is_uint64())
    return static_cast<int64_t>(v.as_uint64());
  return 0;
}

} // namespace

std::string iso_utc(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

std::string conductor_ref(const std::string& ref, int64_t iteration) {
  return iteration > 0 ? ref + "__" + std::to_string(iteration) : ref;
}

json::object task_shape(const json::object& t, const json::object& wf, int64_t seq,
                        bool retried) {
  const auto& type = field(t, "taskType");
  const auto& def_name = field(t, "taskDefName");
  json::object o;
  o["taskId"] = field(t, "taskId");
  o["taskType"] = type.is_string() && type.as_string() == "SIMPLE" ? def_name : type;
  o["taskDefName"] = def_name;
  const auto& ref = field(t, "referenceTaskName");
  o["referenceTaskName"] = ref.is_string()
                             ? json::value(conductor_ref(std::string{ref.as_string()},
                                                         ms_or_zero(field(t, "iteration"))))
                             : ref;
  o["status"] = field(t, "status");
  o["inputData"] = field(t, "input");
  o["outputData"] = field(t, "output");
  o["retryCount"] = field(t, "attempt");
  o["retried"] = retried;
  o["seq"] = seq;
  o["iteration"] = field(t, "iteration");
  o["scheduledTime"] = ms_or_zero(field(t, "scheduledTime"));
  o["startTime"] = ms_or_zero(field(t, "startTime"));
  o["endTime"] = ms_or_zero(field(t, "endTime"));
  o["updateTime"] = ms_or_zero(field(t, "updateTime"));
  o["workflowInstanceId"] = field(wf, "workflowId");
  o["workflowType"] = field(wf, "workflowName");
  o["workflowPriority"] = field(wf, "priority");
  o["correlationId"] = field(wf, "correlationId");
  o["reasonForIncompletion"] = field(t, "reasonForIncompletion");
  o["workerId"] = field(t, "workerId");
  o["pollCount"] = field(t, "pollCount");
  o["queueName"] = field(t, "queueName");
  o["retriedTaskId"] = field(t, "retriedTaskId");
  o["subWorkflowId"] = field(t, "subWorkflowId");
  return o;
}

json::object workflow_shape(const json::object& wf, bool include_tasks) {
  int64_t start = ms_or_zero(field(wf, "startTime"));
  int64_t end = ms_or_zero(field(wf, "endTime"));
  int64_t updated = std::max(start, end);
  json::array tasks;
  if (const auto* arr = field(wf, "tasks").if_array()) {
    // An attempt is `retried` when a later attempt of the same task and iteration exists.
    std::set<std::tuple<std::string, int64_t, int64_t>> attempts;
    auto key = [](const json::object& t, int64_t attempt) {
      const auto& ref = field(t, "referenceTaskName");
      return std::tuple{ref.is_string() ? std::string{ref.as_string()} : std::string{},
                        ms_or_zero(field(t, "iteration")), attempt};
    };
    for (const auto& v : *arr)
      if (const auto* t = v.if_object())
        attempts.insert(key(*t, ms_or_zero(field(*t, "attempt"))));
    int64_t seq = 0;
    for (const auto& v : *arr) {
      const auto* t = v.if_object();
      if (t == nullptr)
        continue;
      updated = std::max(updated, ms_or_zero(field(*t, "updateTime")));
      bool retried = attempts.count(key(*t, ms_or_zero(field(*t, "attempt")) + 1)) > 0;
      tasks.push_back(task_shape(*t, wf, ++seq, retried));
    }
  }
  json::array failed;
  if (const auto& ref = field(wf, "failedTaskRef"); ref.is_string())
    failed.push_back(ref);
  json::object o;
  o["workflowId"] = field(wf, "workflowId");
  o["workflowName"] = field(wf, "workflowName");
  o["workflowVersion"] = field(wf, "workflowVersion");
  o["correlationId"] = field(wf, "correlationId");
  o["status"] = field(wf, "status");
  o["input"] = field(wf, "input");
  o["output"] = field(wf, "output");
  o["variables"] = field(wf, "variables");
  o["reasonForIncompletion"] = field(wf, "reasonForIncompletion");
  o["failedReferenceTaskNames"] = std::move(failed);
  o["createTime"] = start;
  o["startTime"] = start;
  o["endTime"] = end;
  o["updateTime"] = updated;
  o["priority"] = field(wf, "priority");
  o["idempotencyKey"] = field(wf, "idempotencyKey");
  o["parentWorkflowId"] = field(wf, "parentWorkflowId");
  o["parentWorkflowTaskId"] = field(wf, "parentTaskId");
  const auto& domains = field(wf, "taskToDomain");
  o["taskToDomain"] = domains.is_object() ? domains : json::value(json::object{});
  if (include_tasks)
    o["tasks"] = std::move(tasks);
  return o;
}

json::object summary_shape(const json::object& s) {
  int64_t start = ms_or_zero(field(s, "startTime"));
  const auto& end_v = field(s, "endTime");
  int64_t end = ms_or_zero(end_v);
  json::object o;
  o["workflowType"] = field(s, "workflowName");
  o["version"] = field(s, "workflowVersion");
  o["workflowId"] = field(s, "workflowId");
  o["correlationId"] = field(s, "correlationId");
  o["status"] = field(s, "status");
  o["startTime"] = iso_utc(start);
  o["updateTime"] = iso_utc(end_v.is_null() ? start : end);
  o["endTime"] = end_v.is_null() ? json::value(nullptr) : json::value(iso_utc(end));
  o["executionTime"] = end_v.is_null() ? 0 : end - start;
  o["reasonForIncompletion"] = field(s, "reasonForIncompletion");
  return o;
}

const json::object* find_task(const json::object& wf, const std::string& task_id) {
  if (const auto* arr = field(wf, "tasks").if_array())
    for (const auto& v : *arr)
      if (const auto* t = v.if_object())
        if (const auto& id = field(*t, "taskId"); id.is_string() && id.as_string() == task_id)
          return t;
  return nullptr;
}

} // namespace nf::net::web
