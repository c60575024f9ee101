#include "cmd/client_output.hpp"

#include <ctime>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <boost/json.hpp>

namespace nf::cmd {

namespace json = boost::json;

namespace {

json::value parse_or_text(const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  return ec ? json::value(text) : v;
}

// The answer's object; an answer of another shape is printed as it came.
const json::object* object_or_print(const json::value& v, const std::string& text,
                                    std::ostream& out) {
  const auto* o = v.if_object();
  if (o == nullptr)
    out << text << "\n";
  return o;
}

std::string str(const json::value* v) {
  if (v == nullptr || v->is_null())
    return "-";
  if (const auto* s = v->if_string())
    return std::string{*s};
  return json::serialize(*v);
}

std::string str(const json::object& o, const char* key) {
  return str(o.if_contains(key));
}

std::string time_at(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_int64())
    return "-";
  return format_time(v->as_int64());
}

// Long JSON shortened for a one-line summary (`--json` shows it whole).
std::string clip(std::string s, size_t max = 100) {
  if (s.size() > max)
    s = s.substr(0, max - 3) + "...";
  return s;
}

std::string duration(const json::object& t) {
  const auto* start = t.if_contains("startTime");
  const auto* end = t.if_contains("endTime");
  if (start == nullptr || end == nullptr || !start->is_int64() || !end->is_int64())
    return "-";
  return std::to_string(end->as_int64() - start->as_int64()) + "ms";
}

} // namespace

std::string format_time(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::ostringstream s;
  s << std::put_time(&tm, "%Y-%m-%dT%H:%M:%S") << '.' << std::setw(3) << std::setfill('0')
    << (ms % 1000) << 'Z';
  return s.str();
}

void print_execution(const std::string& text, std::ostream& out) {
  auto v = parse_or_text(text);
  const auto* o = object_or_print(v, text, out);
  if (o == nullptr)
    return;
  out << "workflow  " << str(*o, "workflowId") << "  (" << str(*o, "workflowName") << " v"
      << str(*o, "workflowVersion") << ")\n"
      << "status    " << str(*o, "status") << "\n"
      << "started   " << time_at(*o, "startTime") << "   ended " << time_at(*o, "endTime") << "\n";
  if (o->if_contains("correlationId") && !o->at("correlationId").is_null())
    out << "corr. id  " << str(*o, "correlationId") << "\n";
  out << "input     " << clip(str(*o, "input")) << "\n"
      << "output    " << clip(json::serialize(o->contains("output") ? o->at("output") : nullptr))
      << "\n";
  if (o->if_contains("reasonForIncompletion") && !o->at("reasonForIncompletion").is_null())
    out << "reason    " << str(*o, "reasonForIncompletion") << "\n";
  const auto* tasks = o->if_contains("tasks");
  if (tasks == nullptr || !tasks->is_array())
    return;
  out << "tasks     " << tasks->as_array().size() << " (one line per attempt)\n";
  out << "  " << std::left << std::setw(24) << "REF" << std::setw(5) << "ITER" << std::setw(4)
      << "TRY" << std::setw(14) << "TYPE" << std::setw(27) << "STATUS" << std::setw(10)
      << "TOOK"
      << "REASON\n";
  for (const auto& tv : tasks->as_array()) {
    const auto* t = tv.if_object();
    if (t == nullptr)
      continue;
    out << "  " << std::left << std::setw(24) << str(*t, "referenceTaskName") << std::setw(5)
        << str(*t, "iteration") << std::setw(4) << str(*t, "attempt") << std::setw(14)
        << str(*t, "taskType") << std::setw(27) << str(*t, "status") << std::setw(10)
        << duration(*t);
    if (t->if_contains("reasonForIncompletion") && !t->at("reasonForIncompletion").is_null())
      out << clip(str(*t, "reasonForIncompletion"), 60);
    out << "\n";
  }
}

void print_event(const msg::event_view& e, std::ostream& out) {
  out << std::right << std::setw(5) << e.seq << "  " << format_time(e.at_ms) << "  " << std::left
      << std::setw(22) << e.type << ' ' << std::setw(20) << (e.task_ref.empty() ? "-" : e.task_ref)
      << ' ' << clip(e.payload_json, 160) << "\n";
}

void print_search_page(const msg::search_page& page, std::ostream& out) {
  auto v = parse_or_text(page.items_json);
  const auto* items = v.if_array();
  if (items == nullptr) {
    out << page.items_json << "\n";
    return;
  }
  out << std::left << std::setw(38) << "WORKFLOW ID" << std::setw(12) << "STATUS" << std::setw(26)
      << "STARTED"
      << "NAME\n";
  for (const auto& iv : *items) {
    const auto* i = iv.if_object();
    if (i == nullptr)
      continue;
    out << std::left << std::setw(38) << str(*i, "workflowId") << std::setw(12)
        << str(*i, "status") << std::setw(26) << time_at(*i, "startTime") << str(*i, "workflowName")
        << " v" << str(*i, "workflowVersion") << "\n";
  }
  out << items->size() << " execution(s)";
  if (!page.next_cursor.empty())
    out << "; next page: --cursor " << page.next_cursor;
  out << "\n";
}

void print_status(const std::string& text, std::ostream& out) {
  auto v = parse_or_text(text);
  const auto* o = object_or_print(v, text, out);
  if (o == nullptr)
    return;
  if (const auto* node = o->if_contains("node")) {
    if (const auto* n = node->if_object()) {
      for (const auto& kv : *n)
        out << std::left << std::setw(12) << std::string{kv.key()} << ' ' << str(&kv.value())
            << "\n";
    } else {
      out << "node         " << str(node) << "\n";
    }
  }
  if (const auto* pending = o->if_contains("pendingDecisions"))
    if (const auto* p = pending->if_object())
      out << std::left << std::setw(12) << "decisions" << ' ' << str(*p, "total")
          << " pending\n";
  if (const auto* queues = o->if_contains("queues")) {
    if (const auto* qs = queues->if_array()) {
      out << "queues       " << (qs->empty() ? "all empty" : "") << "\n";
      if (!qs->empty())
        out << "  " << std::left << std::setw(32) << "QUEUE" << std::setw(10) << "READY"
            << "LEASED\n";
      for (const auto& qv : *qs)
        if (const auto* q = qv.if_object())
          out << "  " << std::left << std::setw(32) << str(*q, "name") << std::setw(10)
              << str(*q, "ready") << str(*q, "leased") << "\n";
    }
  }
}

void print_dead_letters(const std::string& text, std::ostream& out) {
  auto v = parse_or_text(text);
  const auto* o = v.if_object();
  const auto* items = o ? o->if_contains("deadLetters") : nullptr;
  if (items == nullptr || !items->is_array()) {
    out << text << "\n";
    return;
  }
  out << std::left << std::setw(10) << "ID" << std::setw(24) << "EVENT" << std::setw(38)
      << "WORKFLOW" << std::setw(9) << "TRIES"
      << "LAST ERROR\n";
  for (const auto& dv : items->as_array())
    if (const auto* d = dv.if_object())
      out << std::left << std::setw(10) << str(*d, "id") << std::setw(24) << str(*d, "eventType")
          << std::setw(38) << str(*d, "workflowId") << std::setw(9) << str(*d, "attempts")
          << clip(str(*d, "lastError"), 60) << "\n";
  out << items->as_array().size() << " dead letter(s)";
  if (const auto* next = o->if_contains("nextAfterId"); next && !next->is_null())
    out << "; next page: --after " << str(next);
  out << "\n";
}

void print_task_history(const std::string& text, std::ostream& out) {
  auto v = parse_or_text(text);
  const auto* o = v.if_object();
  const auto* items = o ? o->if_contains("executions") : nullptr;
  if (items == nullptr || !items->is_array()) {
    out << text << "\n";
    return;
  }
  out << std::left << std::setw(38) << "TASK" << std::setw(38) << "WORKFLOW" << std::setw(20)
      << "REF" << std::setw(28) << "STATUS"
      << "SCHEDULED (ms)\n";
  for (const auto& ev : items->as_array())
    if (const auto* e = ev.if_object())
      out << std::left << std::setw(38) << str(*e, "taskId") << std::setw(38)
          << str(*e, "workflowInstanceId") << std::setw(20) << clip(str(*e, "referenceTaskName"), 19)
          << std::setw(28) << str(*e, "status") << str(*e, "scheduledTime") << "\n";
  out << items->as_array().size() << " execution(s)";
  if (const auto* next = o->if_contains("next"); next && !next->is_null())
    out << "; next page: --before " << str(next);
  out << "\n";
}

void print_schedules(const std::string& text, std::ostream& out) {
  auto v = parse_or_text(text);
  auto line = [&](const json::object& s) {
    const auto* start = s.if_contains("startWorkflowRequest");
    std::string workflow = start && start->is_object() ? str(start->as_object(), "name") : "";
    const auto* paused = s.if_contains("paused");
    bool is_paused = paused && paused->is_bool() && paused->as_bool();
    out << str(s, "name") << "  " << (is_paused ? "paused" : "active") << "  \""
        << str(s, "cronExpression") << "\"  " << str(s, "zoneId") << "  " << workflow
        << "  next " << time_at(s, "nextRunTime") << "\n";
  };
  if (const auto* a = v.if_array()) {
    for (const auto& x : *a) {
      if (x.is_int64())
        out << format_time(x.as_int64()) << "\n";
      else if (const auto* s = x.if_object())
        line(*s);
    }
    return;
  }
  if (const auto* o = v.if_object(); o && o->contains("cronExpression")) {
    line(*o);
    return;
  }
  out << text << "\n";
}

void print_namespaces(const std::string& text, std::ostream& out) {
  auto v = parse_or_text(text);
  const auto* o = v.if_object();
  const auto* items = o ? o->if_contains("namespaces") : nullptr;
  if (items == nullptr || !items->is_array()) {
    out << text << "\n";
    return;
  }
  for (const auto& nv : items->as_array())
    if (const auto* n = nv.if_object())
      out << str(*n, "name") << "\n";
}

void print_registered(const std::vector<std::string>& task_sources,
                      const std::vector<std::string>& workflow_sources, const std::string& text,
                      std::ostream& out) {
  auto v = parse_or_text(text);
  const auto* o = v.if_object();
  if (o == nullptr) {
    out << text << "\n";
    return;
  }
  auto list = [&](const char* key, const std::vector<std::string>& sources, const char* field,
                  const char* label) {
    const auto* arr = o->if_contains(key);
    if (arr == nullptr || !arr->is_array())
      return;
    size_t i = 0;
    for (const auto& dv : arr->as_array())
      if (const auto* d = dv.if_object()) {
        if (i < sources.size())
          out << sources[i] << ": ";
        ++i;
        out << label << ' ' << str(*d, "name") << " (" << field << ' ' << str(*d, field)
            << ")\n";
      }
  };
  list("taskDefs", task_sources, "revision", "task definition");
  list("workflowDefs", workflow_sources, "version", "workflow definition");
}

bool is_final_event(const std::string& type) {
  return type == "WORKFLOW_COMPLETED" || type == "WORKFLOW_FAILED" || type == "WORKFLOW_TIMED_OUT"
         || type == "WORKFLOW_TERMINATED";
}

} // namespace nf::cmd
