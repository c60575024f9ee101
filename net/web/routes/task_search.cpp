// Conductor's task search (GET /api/tasks/search), as far as nodeflow's schema serves it:
// the executions of one task type, newest scheduled first, a page at a time by cursor, on
// the index made for that ("TaskExecutions_recent_by_def_idx", store/task_history.hpp).

#include <algorithm>
#include <regex>
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
  static const std::regex clause_re{R"(^\s*(\w+)\s*(=|\bIN\b)\s*(.*?)\s*$)", std::regex::icase};
  static const std::regex list_re{R"(^\((.*)\)$)"};
  auto add_status = [&](const std::string& st) {
    if (!flow::parse_task_status(st)) {
      ex->fail(400, "query: unknown task status \"" + st + "\"", "query");
      return false;
    }
    s.statuses.push_back(st);
    return true;
  };
  for (const auto& clause : q ? split_and(*q) : std::vector<std::string>{}) {
    std::smatch m;
    if (!std::regex_match(clause, m, clause_re)) {
      ex->fail(400, "query: unsupported clause \"" + clause + "\" (" + supported + ")", "query");
      return std::nullopt;
    }
    std::string field = m[1], op = m[2], value = m[3];
    std::transform(op.begin(), op.end(), op.begin(), ::toupper);
    if ((field == "taskType" || field == "taskDefName") && op == "=") {
      auto name = unquote(value);
      if (!s.q.task_def_name.empty() && s.q.task_def_name != name) {
        ex->fail(400, "query: one task type per search, got \"" + s.q.task_def_name
                        + "\" and \"" + name + "\"",
                 "query");
        return std::nullopt;
      }
      s.q.task_def_name = name;
    } else if (field == "status" && s.statuses.empty()) {
      std::smatch list;
      std::string items = unquote(value);
      if (op == "IN") {
        if (!std::regex_match(value, list, list_re)) {
          ex->fail(400, "query: expected a list (A,B) after status IN", "query");
          return std::nullopt;
        }
        items = list[1];
      }
      size_t start = 0;
      for (;;) {
        auto comma = op == "IN" ? items.find(',', start) : std::string::npos;
        if (!add_status(unquote(items.substr(start, comma - start))))
          return std::nullopt;
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else {
      ex->fail(400, "query: unsupported clause \"" + clause + "\" (" + supported + ")", "query");
      return std::nullopt;
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
