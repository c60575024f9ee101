#include "net/web/routes/workflow_requests.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <regex>

#include <boost/json.hpp>

#include "engine/decide/task_domains.hpp"
#include "flow/status.hpp"
#include "flow/uuid.hpp"
#include "net/web/json_body.hpp"
#include "proto/limits.hpp"

namespace nf::net::web {

namespace json = boost::json;

namespace {

bool empty_value(const json::value& v) {
  return v.is_null() || (v.is_string() && v.as_string().empty())
         || (v.is_object() && v.as_object().empty());
}

// A string field: absent or null leaves `out` as it is.
bool read_text(const exchange_ptr& ex, const json::value& v, const char* field,
               std::string& out) {
  if (v.is_null())
    return true;
  if (!v.is_string()) {
    ex->fail(400, std::string{field} + ": expected a string", field);
    return false;
  }
  out = std::string{v.as_string()};
  return true;
}

// A string field that lands in a btree index (proto/limits.hpp).
bool read_key(const exchange_ptr& ex, const json::value& v, const char* field,
              std::string& out) {
  if (!read_text(ex, v, field, out))
    return false;
  if (out.size() <= max_key_bytes)
    return true;
  ex->fail(400, std::string{field} + ": expected at most " + std::to_string(max_key_bytes)
                  + " bytes, got " + std::to_string(out.size()),
           field);
  return false;
}

bool read_int(const exchange_ptr& ex, const json::value& v, const char* field, int64_t lo,
              int64_t hi, int64_t& out) {
  if (v.is_null())
    return true;
  if (!v.is_int64() || v.as_int64() < lo || v.as_int64() > hi) {
    ex->fail(400, std::string{field} + ": expected an integer from " + std::to_string(lo)
                    + " to " + std::to_string(hi),
             field);
    return false;
  }
  out = v.as_int64();
  return true;
}

bool refuse_unless_empty(const exchange_ptr& ex, const json::value& v, const char* field,
                         const char* why) {
  if (empty_value(v))
    return false;
  ex->fail(400, std::string{field} + ": " + why, field);
  return true;
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
}

bool parse_ms(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 15)
    return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  out = std::stoll(text);
  return true;
}

// One filter set from two places (query clause, plain parameter): the same field twice
// must agree.
bool set_once(const exchange_ptr& ex, std::string& slot, const std::string& value,
              const char* field, const char* name) {
  if (!slot.empty() && slot != value) {
    ex->fail(400, std::string{field} + ": " + name + " is given twice (\"" + slot + "\" and \""
                    + value + "\")",
             field);
    return false;
  }
  slot = value;
  return true;
}

bool add_status(const exchange_ptr& ex, const std::string& s, const char* field,
                std::vector<std::string>& out) {
  if (!flow::parse_workflow_status(s)) {
    ex->fail(400, std::string{field} + ": unknown status \"" + s
                    + "\" (expected RUNNING, COMPLETED, FAILED, TIMED_OUT, TERMINATED or PAUSED)",
             field);
    return false;
  }
  out.push_back(s);
  return true;
}

} // namespace

std::optional<start_spec> read_start_request(const exchange_ptr& ex, const json::object& body,
                                             bool name_required) {
  start_spec s;
  auto& r = s.req;
  for (const auto& [key, v] : body) {
    if (key == "name") {
      if (!read_text(ex, v, "name", r.workflow_name))
        return std::nullopt;
    } else if (key == "version") {
      if (!read_int(ex, v, "version", 0, INT32_MAX, r.version))
        return std::nullopt;
    } else if (key == "input") {
      if (!v.is_null() && !v.is_object()) {
        ex->fail(400, "input: expected a JSON object", "input");
        return std::nullopt;
      }
      r.input_json = v.is_null() ? "{}" : json::serialize(v);
    } else if (key == "correlationId") {
      if (!read_key(ex, v, "correlationId", r.correlation_id))
        return std::nullopt;
    } else if (key == "priority") {
      int64_t p = 0;
      if (!read_int(ex, v, "priority", 0, 99, p))
        return std::nullopt;
      r.priority = static_cast<int32_t>(p);
    } else if (key == "idempotencyKey") {
      if (!read_key(ex, v, "idempotencyKey", r.idempotency_key))
        return std::nullopt;
    } else if (key == "idempotencyStrategy") {
      std::string st;
      if (!read_text(ex, v, "idempotencyStrategy", st))
        return std::nullopt;
      if (st == "RETURN_EXISTING")
        s.strategy = idempotency::return_existing;
      else if (st == "FAIL_ON_RUNNING")
        s.strategy = idempotency::fail_on_running;
      else if (!st.empty() && st != "FAIL") {
        ex->fail(400, "idempotencyStrategy: expected FAIL, RETURN_EXISTING or FAIL_ON_RUNNING, "
                      "got \"" + st + "\"",
                 "idempotencyStrategy");
        return std::nullopt;
      }
    } else if (key == "taskToDomain") {
      if (v.is_null())
        continue;
      const auto* domains = v.if_object();
      if (domains == nullptr) {
        ex->fail(400, "taskToDomain: expected an object (task name or \"*\" to a domain)",
                 "taskToDomain");
        return std::nullopt;
      }
      if (auto why = engine::check_task_to_domain(*domains); !why.empty()) {
        ex->fail(400, why, "taskToDomain");
        return std::nullopt;
      }
      if (!domains->empty())
        r.task_to_domain_json = json::serialize(*domains);
    } else if (key == "workflowDef") {
      if (refuse_unless_empty(ex, v, "workflowDef",
                              "inline definitions are not supported: register it with "
                              "POST /api/metadata/workflow and start it by name"))
        return std::nullopt;
    } else if (key == "externalInputPayloadStoragePath") {
      if (refuse_unless_empty(ex, v, "externalInputPayloadStoragePath",
                              "external payload storage is not supported: send the input"))
        return std::nullopt;
    } else if (key == "createdBy") {
      if (refuse_unless_empty(ex, v, "createdBy", "nodeflow does not record who started it"))
        return std::nullopt;
    } else {
      std::string k{key};
      ex->fail(400, k + ": unknown field (not part of StartWorkflowRequest)", k);
      return std::nullopt;
    }
  }
  if (name_required && r.workflow_name.empty()) {
    ex->fail(400, "name: expected the name of a registered workflow definition", "name");
    return std::nullopt;
  }
  return s;
}

std::optional<rerun_spec> read_rerun_request(const exchange_ptr& ex, const json::object& body,
                                             const std::string& workflow_id) {
  rerun_spec s;
  for (const auto& [key, v] : body) {
    if (key == "reRunFromTaskId") {
      if (!read_text(ex, v, "reRunFromTaskId", s.task_id))
        return std::nullopt;
    } else if (key == "taskInput") {
      if (!v.is_null() && !v.is_object()) {
        ex->fail(400, "taskInput: expected a JSON object", "taskInput");
        return std::nullopt;
      }
      if (!empty_value(v))
        s.task_input_json = json::serialize(v);
    } else if (key == "reRunFromWorkflowId") {
      std::string id;
      if (!read_text(ex, v, "reRunFromWorkflowId", id))
        return std::nullopt;
      if (!id.empty() && id != workflow_id) {
        ex->fail(400, "reRunFromWorkflowId: only the workflow of the path can be rerun, got "
                      + id,
                 "reRunFromWorkflowId");
        return std::nullopt;
      }
    } else if (key == "workflowInput") {
      if (refuse_unless_empty(ex, v, "workflowInput",
                              "a rerun keeps the workflow's input (restart takes none either): "
                              "give the task new input with taskInput"))
        return std::nullopt;
    } else if (key == "correlationId") {
      if (refuse_unless_empty(ex, v, "correlationId", "a rerun keeps the correlation id"))
        return std::nullopt;
    } else {
      std::string k{key};
      ex->fail(400, k + ": unknown field (not part of RerunWorkflowRequest)", k);
      return std::nullopt;
    }
  }
  if (s.task_id.empty()) {
    ex->fail(400, "reRunFromTaskId: expected the taskId to rerun from (restart runs the "
                  "whole workflow again)",
             "reRunFromTaskId");
    return std::nullopt;
  }
  if (!flow::is_uuid(s.task_id)) {
    ex->fail(400, "reRunFromTaskId: expected a task id (UUID), got \"" + s.task_id + "\"",
             "reRunFromTaskId");
    return std::nullopt;
  }
  return s;
}

std::optional<int32_t> read_search_page(const exchange_ptr& ex, const char* sort_key) {
  auto start_at = query_int(ex, "start", 0, 0, INT32_MAX);
  if (!start_at)
    return std::nullopt;
  if (*start_at > 0) {
    ex->fail(400, "start: nodeflow pages by cursor, not by offset: pass the previous page's "
                  "nextCursor as cursor",
             "start");
    return std::nullopt;
  }
  auto size = query_int(ex, "size", 100, 1, 1000);
  if (!size)
    return std::nullopt;
  if (const auto* f = ex->query("freeText"); f != nullptr && !f->empty() && *f != "*") {
    ex->fail(400, "freeText: full-text search is not supported (use query)", "freeText");
    return std::nullopt;
  }
  if (const auto* s = ex->query("sort"); s != nullptr && !s->empty() && *s != sort_key) {
    ex->fail(400, std::string{"sort: results come newest first only ("} + sort_key + ")",
             "sort");
    return std::nullopt;
  }
  return static_cast<int32_t>(*size);
}

std::string unquote(std::string s) {
  s = trim(std::move(s));
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

std::vector<std::string> split_and(const std::string& q) {
  static const std::regex and_re{R"(\s+AND\s+)", std::regex::icase};
  std::vector<std::string> out;
  std::sregex_token_iterator it{q.begin(), q.end(), and_re, -1}, end;
  for (; it != end; ++it)
    out.push_back(*it);
  return out;
}

std::optional<query_clause> parse_clause(const std::string& clause, std::string& why) {
  static const std::regex clause_re{R"(^\s*(\w+)\s*(>=|<=|=|>|<|\bIN\b)\s*(.*?)\s*$)",
                                    std::regex::icase};
  static const std::regex or_re{R"(\s+OR\s+)", std::regex::icase};
  std::smatch m;
  if (!std::regex_match(clause, m, clause_re)) {
    why = "unsupported syntax";
    return std::nullopt;
  }
  query_clause c{m[1], m[2], m[3]};
  if (!c.value.empty() && c.value.front() != '\'' && c.value.front() != '"'
      && std::regex_search(c.value, or_re)) {
    why = "OR is not supported";
    return std::nullopt;
  }
  for (auto& ch : c.op)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return c;
}

std::optional<std::vector<std::string>> clause_values(const query_clause& c, std::string& why) {
  if (c.op != "IN")
    return std::vector<std::string>{unquote(c.value)};
  static const std::regex list_re{R"(^\((.*)\)$)"};
  std::smatch list;
  if (!std::regex_match(c.value, list, list_re)) {
    why = "expected a list (A,B)";
    return std::nullopt;
  }
  std::string items = list[1];
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    auto comma = items.find(',', start);
    out.push_back(unquote(items.substr(start, comma - start)));
    if (comma == std::string::npos)
      return out;
    start = comma + 1;
  }
}

std::optional<search_spec> read_search(const exchange_ptr& ex) {
  search_spec s;
  auto& r = s.req;
  std::vector<std::string> statuses;
  std::string name, correlation;
  if (const auto* q = ex->query("query"); q != nullptr && !trim(*q).empty()) {
    bool status_seen = false;
    for (const auto& clause : split_and(*q)) {
      auto bad = [&](const std::string& why) {
        ex->fail(400, "query: " + why + " in \"" + trim(clause)
                        + "\" (supported: status = X, status IN (A,B), workflowType = X, "
                          "correlationId = X, startTime > ms, startTime < ms, joined by AND)",
                 "query");
      };
      std::string why;
      auto c = parse_clause(clause, why);
      if (!c) {
        bad(why);
        return std::nullopt;
      }
      const auto& [field, op, value] = *c;
      if (field == "status" && (op == "=" || op == "IN")) {
        if (status_seen) {
          bad("status is given twice");
          return std::nullopt;
        }
        status_seen = true;
        auto values = clause_values(*c, why);
        if (!values) {
          bad(why);
          return std::nullopt;
        }
        for (const auto& v : *values)
          if (!add_status(ex, v, "query", statuses))
            return std::nullopt;
      } else if (field == "workflowType" && op == "=") {
        if (!set_once(ex, name, unquote(value), "query", "workflowType"))
          return std::nullopt;
      } else if (field == "correlationId" && op == "=") {
        if (!set_once(ex, correlation, unquote(value), "query", "correlationId"))
          return std::nullopt;
      } else if (field == "startTime" && op != "=" && op != "IN") {
        int64_t ms = 0;
        if (!parse_ms(unquote(value), ms)) {
          bad("startTime is compared with milliseconds since the epoch");
          return std::nullopt;
        }
        // The store's bounds: after is inclusive, before exclusive.
        if (op == ">")
          r.started_after_ms = std::max(r.started_after_ms, ms + 1);
        else if (op == ">=")
          r.started_after_ms = std::max(r.started_after_ms, ms);
        else if (op == "<")
          r.started_before_ms = r.started_before_ms ? std::min(r.started_before_ms, ms) : ms;
        else
          r.started_before_ms =
            r.started_before_ms ? std::min(r.started_before_ms, ms + 1) : ms + 1;
      } else {
        bad("unsupported clause");
        return std::nullopt;
      }
    }
  }
  if (const auto* st = ex->query("status"); st != nullptr && !st->empty()) {
    if (!statuses.empty()) {
      ex->fail(400, "status: the query names statuses already", "status");
      return std::nullopt;
    }
    if (!add_status(ex, *st, "status", statuses))
      return std::nullopt;
  }
  if (const auto* n = ex->query("workflowType"); n != nullptr && !n->empty())
    if (!set_once(ex, name, *n, "workflowType", "workflowType"))
      return std::nullopt;
  if (const auto* c = ex->query("correlationId"); c != nullptr && !c->empty())
    if (!set_once(ex, correlation, *c, "correlationId", "correlationId"))
      return std::nullopt;
  r.workflow_name = name;
  r.correlation_id = correlation;
  if (statuses.size() == 1)
    r.status = statuses.front();
  else
    s.statuses = std::move(statuses);
  return s;
}

} // namespace nf::net::web
