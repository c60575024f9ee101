// Conductor's task search (GET /api/tasks/search), as far as nodeflow's schema serves it:
// the executions of one task type, newest scheduled first, a page at a time by cursor, on
// the index made for that ("TaskExecutions_recent_by_def_idx", store/task_history.hpp).

#include <algorithm>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "flow/status.hpp"
#include "net/web/conductor_shapes.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "net/web/routes/workflow_requests.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

struct task_search {
  msg::task_history_query q;
  std::vector<std::string> statuses; ///< empty = any
};

const char* const supported = "supported: taskType = X (or taskDefName = X), required; "
                              "status = X or status IN (A,B); joined by AND";

std::optional<task_search> read_task_search(const exchange_ptr& ex) {
  task_search s;
  const auto* q = ex->query("query");
  for (const auto& clause : q ? split_and(*q) : std::vector<std::string>{}) {
    auto bad = [&](const std::string& why) {
      ex->fail(400, "query: " + why + " in \"" + clause + "\" (" + supported + ")", "query");
      return std::nullopt;
    };
    std::string why;
    auto c = parse_clause(clause, why);
    if (!c)
      return bad(why);
    const auto& [field, op, value] = *c;
    if ((field == "taskType" || field == "taskDefName") && op == "=") {
      auto name = unquote(value);
      if (!s.q.task_def_name.empty() && s.q.task_def_name != name)
        return bad("one task type per search, got \"" + s.q.task_def_name + "\" and \"" + name
                   + "\"");
      s.q.task_def_name = name;
    } else if (field == "status" && (op == "=" || op == "IN") && s.statuses.empty()) {
      auto values = clause_values(*c, why);
      if (!values)
        return bad(why);
      for (const auto& v : *values) {
        if (!flow::parse_task_status(v))
          return bad("unknown task status \"" + v + "\"");
        s.statuses.push_back(v);
      }
    } else {
      return bad("unsupported clause");
    }
  }
  if (s.q.task_def_name.empty()) {
    ex->fail(400, std::string{"query: name the task type (taskType = X): tasks are searched "
                              "by type ("} + supported + ")",
             "query");
    return std::nullopt;
  }
  return s;
}

// Conductor's TaskSummary from one row of the task history: times as ISO-8601 UTC text,
// executionTime and queueWaitTime in ms (0 until known).
json::object task_summary(const json::object& t, const std::string& def_name) {
  auto ms = [&](const char* k) {
    const auto* v = t.if_contains(k);
    return v && v->is_number() ? v->to_number<int64_t>() : int64_t{0};
  };
  auto time = [&](const char* k) {
    auto v = ms(k);
    return v > 0 ? json::value(iso_utc(v)) : json::value(nullptr);
  };
  int64_t scheduled = ms("scheduledTime"), started = ms("startTime"), ended = ms("endTime");
  const auto& type = t.at("taskType");
  json::object o;
  o["taskId"] = t.at("taskId");
  o["workflowId"] = t.at("workflowInstanceId");
  o["taskDefName"] = def_name;
  o["taskType"] = type.is_string() && type.as_string() == "SIMPLE" ? json::value(def_name) : type;
  o["referenceTaskName"] = conductor_ref(std::string{t.at("referenceTaskName").as_string()},
                                         ms("iteration"));
  o["status"] = t.at("status");
  o["retryCount"] = t.at("retryCount");
  o["scheduledTime"] = time("scheduledTime");
  o["startTime"] = time("startTime");
  o["endTime"] = time("endTime");
  o["updateTime"] = iso_utc(std::max({scheduled, started, ended}));
  o["executionTime"] = started > 0 && ended > 0 ? ended - started : 0;
  o["queueWaitTime"] = started > 0 ? started - scheduled : 0;
  o["workerId"] = t.at("workerId");
  o["reasonForIncompletion"] = t.at("reasonForIncompletion");
  return o;
}

} // namespace

void add_task_search_route(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  r.add({verb::get, "/api/tasks/search",
         "The executions of one task type, newest scheduled first, a page at a time (by cursor)",
         {{"query", std::string{"clauses joined by AND: "} + supported, true},
          {"size", "at most this many (1 … 1000, default 100)", false, "integer"},
          {"cursor", "nextCursor of the previous page", false},
          {"start", "0 only: pages follow nextCursor, not offsets", false, "integer"},
          {"freeText", "* or empty only (no full-text search)", false},
          {"sort", "scheduledTime:DESC only (the order of the index)", false}},
         body_kind::none, {},
         "{\"totalHits\": the results on this page, \"results\":[TaskSummary], \"nextCursor\": "
         "cursor | null} — with a status filter a page may hold fewer than size and still have "
         "a next one",
         "task", access::reader, [api](const exchange_ptr& ex) {
           auto size = read_search_page(ex, "scheduledTime:DESC");
           if (!size)
             return;
           auto spec = read_task_search(ex);
           if (!spec)
             return;
           spec->q.limit = *size;
           if (const auto* c = ex->query("cursor"))
             spec->q.cursor = *c;
           auto def_name = spec->q.task_def_name;
           api->ask<std::string>(
             [ex, def_name, statuses = spec->statuses](std::string& text) {
               json::error_code ec;
               auto page = json::parse(text, ec);
               const auto* o = ec ? nullptr : page.if_object();
               json::array results;
               if (const auto* rows = o ? o->if_contains("executions") : nullptr;
                   rows && rows->is_array())
                 for (const auto& row : rows->as_array()) {
                   const auto& t = row.as_object();
                   if (!statuses.empty()
                       && std::find(statuses.begin(), statuses.end(),
                                    t.at("status").as_string().c_str())
                            == statuses.end())
                     continue;
                   results.push_back(task_summary(t, def_name));
                 }
               auto hits = static_cast<int64_t>(results.size());
               ex->respond_json(200, json::object{{"totalHits", hits},
                                                  {"results", std::move(results)},
                                                  {"nextCursor", o ? o->at("next") : nullptr}});
             },
             fail_with(ex), task_history_atom_v, scoped(ex, std::move(spec->q)));
         }});
}

} // namespace nf::net::web
