#include "cmd/client_commands.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>

#include <boost/json.hpp>

#include "cmd/cli_args.hpp"
#include "cmd/client_output.hpp"
#include "cmd/validate_command.hpp"
#include "flow/parse.hpp"
#include "flow/problem.hpp"
#include "net/client/client.hpp"
#include "proto/errors.hpp"

namespace nf::cmd {

namespace {

// What one subcommand accepts and how it runs once its arguments are read.
struct spec {
  const char* usage;
  std::vector<std::string> value_flags;
  std::vector<std::string> switch_flags;
  size_t min_positional;
  size_t max_positional; // SIZE_MAX = any number
};

constexpr size_t any = SIZE_MAX;

const std::map<std::string, spec>& specs() {
  static const std::map<std::string, spec> all{
    {"defs", {"defs put FILE...", {}, {}, 2, any}},
    {"start",
     {"start NAME [--version V] [--input JSON] [--key K] [--correlation-id C] [--priority P] "
      "[--task-to-domain JSON] [--count N]",
      {"version", "input", "key", "correlation-id", "priority", "task-to-domain", "count"},
      {},
      1,
      1}},
    {"get", {"get ID [--json]", {}, {"json"}, 1, 1}},
    {"events", {"events ID [--follow] [--after SEQ] [--json]", {"after"}, {"follow", "json"}, 1, 1}},
    {"pause", {"pause ID [--reason R]", {"reason"}, {}, 1, 1}},
    {"resume", {"resume ID [--reason R]", {"reason"}, {}, 1, 1}},
    {"terminate", {"terminate ID [--reason R]", {"reason"}, {}, 1, 1}},
    {"retry", {"retry ID [--reason R]", {"reason"}, {}, 1, 1}},
    {"remove", {"remove ID [--reason R]", {"reason"}, {}, 1, 1}},
    {"decide", {"decide ID", {}, {}, 1, 1}},
    {"resetcallbacks", {"resetcallbacks ID", {}, {}, 1, 1}},
    {"rerun",
     {"rerun ID --task REF [--iteration N] [--input JSON]", {"task", "iteration", "input"}, {}, 1,
      1}},
    {"restart", {"restart ID [--input JSON]", {"input"}, {}, 1, 1}},
    {"skip",
     {"skip ID --task REF [--input JSON] [--output JSON]", {"task", "input", "output"}, {}, 1,
      1}},
    {"signal", {"signal ID NAME [--payload JSON]", {"payload"}, {}, 2, 2}},
    {"search",
     {"search [--status S] [--name N] [--started-after MS] [--limit N] [--cursor C] [--json]",
      {"status", "name", "started-after", "limit", "cursor"},
      {"json"},
      0,
      0}},
    {"deadletters",
     {"deadletters list [--after ID] [--limit N] [--json] | deadletters replay [ID...]",
      {"after", "limit"},
      {"json"},
      1,
      any}},
    {"status", {"status [--json]", {}, {"json"}, 0, 0}},
    {"task-executions",
     {"task-executions NAME [--limit N] [--before C] [--json]", {"limit", "before"}, {"json"}, 1,
      1}},
    {"schedules",
     {"schedules create NAME --cron EXPR --workflow WF [--version V] [--input JSON] "
      "[--correlation-id C] [--zone Z] [--catch-up] [--paused] [--start MS] [--end MS] "
      "[--description D] | schedules list [--workflow WF] [--json] | schedules get NAME | "
      "schedules pause NAME [--reason R] | schedules resume NAME | schedules delete NAME | "
      "schedules next NAME|--cron EXPR [--zone Z] [--count N]",
      {"cron", "workflow", "version", "input", "correlation-id", "zone", "start", "end",
       "description", "reason", "count"},
      {"catch-up", "paused", "json"},
      1,
      2}},
    {"namespaces",
     {"namespaces list [--json] | namespaces create NAME | namespaces remove NAME",
      {},
      {"json"},
      1,
      2}},
  };
  return all;
}

// A usage problem: reported with the subcommand's usage line, exit 2.
struct usage_error {
  std::string message;
};

int64_t integer_flag(const cli_args& args, const std::string& name, int64_t lo, int64_t hi,
                     int64_t fallback) {
  auto raw = args.value(name);
  if (!raw)
    return fallback;
  const std::string& s = *raw;
  bool digits = !s.empty() && s.find_first_not_of("0123456789", s[0] == '-' ? 1 : 0)
                                == std::string::npos && s != "-";
  int64_t v = 0;
  if (digits && s.size() < 19)
    v = std::stoll(s);
  if (!digits || s.size() >= 19 || v < lo || v > hi)
    throw usage_error{"--" + name + ": expected an integer " + std::to_string(lo) + " … "
                      + std::to_string(hi) + ", got \"" + s + "\""};
  return v;
}

int fail(std::ostream& err, const std::string& what, const caf::error& e) {
  err << "nodeflow " << what << ": " << describe(e) << "\n";
  return 1;
}

// A JSON answer: as it came with --json, else in its human form.
int show(const char* what, const caf::expected<std::string>& r, bool as_json,
         void (*human)(const std::string&, std::ostream&), std::ostream& out, std::ostream& err) {
  if (!r)
    return fail(err, what, r.error());
  if (as_json)
    out << *r << "\n";
  else
    human(*r, out);
  return 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw usage_error{path + ": cannot read the file"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every definition of one `defs put`, sent as one request so that the node
// commits all of them or none (I11), and where each came from, to name the file
// in a problem the node finds and in what it registered.
struct definitions_batch {
  struct source {
    std::string file;
    std::optional<size_t> index; ///< its place in the file's array, if the file holds one
  };
  std::string text; ///< one file: its text as is; several: one JSON array of everything
  std::vector<std::string> files;
  std::vector<source> sources;                             ///< per element of `text`'s array
  std::vector<std::string> task_sources, workflow_sources; ///< the files, per kind, in order

  // `texts` were validated already: each parses.
  definitions_batch(std::vector<std::string> names, const std::vector<std::string>& texts)
    : files(std::move(names)) {
    boost::json::array all;
    for (size_t f = 0; f < files.size(); ++f) {
      boost::json::value doc;
      flow::problems ignored;
      flow::parse_json(texts[f], doc, ignored); // the limits `nodeflow validate` parsed with
      auto add = [&](boost::json::value& v, std::optional<size_t> index) {
        const auto* obj = v.if_object();
        (obj != nullptr && flow::looks_like_workflow(*obj) ? workflow_sources : task_sources)
          .push_back(files[f]);
        sources.push_back({files[f], index});
        all.push_back(std::move(v));
      };
      if (auto* arr = doc.if_array())
        for (size_t j = 0; j < arr->size(); ++j)
          add((*arr)[j], j);
      else
        add(doc, std::nullopt);
    }
    text = files.size() == 1 ? texts.front() : boost::json::serialize(all);
  }

  // The node's problems (`path: what; path: what`), one a line, each under the file it
  // is about: of several files, `[k].tasks[2].name: what` becomes `b.json: tasks[2].name:
  // what` (or `b.json: [j].tasks[2].name: what` when b.json holds an array).
  std::string attribute(const std::string& message) const {
    std::string out;
    for (size_t at = 0; at <= message.size();) {
      auto end = std::min(message.find("; ", at), message.size());
      auto problem = message.substr(at, end - at);
      at = end + 2;
      if (files.size() == 1) {
        out += files.front() + ": " + problem + "\n";
        continue;
      }
      size_t k = 0;
      if (auto rest = element_at(problem, 0, k); rest != std::string::npos) {
        auto tail = problem.substr(rest); // `.field: what` or `: what`
        const auto& src = sources[k];
        if (src.index)
          problem = src.file + ": " + flow::path_index("", *src.index) + tail;
        else
          problem = src.file + (tail.front() == '.' ? ": " + tail.substr(1) : tail);
      }
      // A duplicate names the other element it repeats: "(also at [k])".
      const std::string also = "(also at ";
      if (auto a = problem.find(also); a != std::string::npos) {
        size_t j = 0;
        if (auto close = element_at(problem, a + also.size(), j); close != std::string::npos) {
          const auto& src = sources[j];
          problem = problem.substr(0, a + also.size()) + src.file
                    + (src.index ? ": " + flow::path_index("", *src.index) : "")
                    + problem.substr(close);
        }
      }
      out += problem + "\n";
    }
    return out;
  }

private:
  // `[k]` at `at` naming an element of the batch: sets `k`, returns the offset after it
  // (npos when there is none).
  size_t element_at(const std::string& s, size_t at, size_t& k) const {
    if (at >= s.size() || s[at] != '[')
      return std::string::npos;
    auto close = s.find(']', at);
    if (close == std::string::npos || close == at + 1 || close - at > 10)
      return std::string::npos;
    auto digits = s.substr(at + 1, close - at - 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos)
      return std::string::npos;
    k = std::stoul(digits);
    return k < sources.size() && close + 1 < s.size() ? close + 1 : std::string::npos;
  }
};

using action = std::function<int(client&, std::ostream&, std::ostream&)>;

// `schedules ACTION …`: one schedule_request, or for `next NAME` the schedule's read first.
action prepare_schedules(const cli_args& a) {
  const auto& pos = a.positional;
  msg::schedule_request r;
  r.op = pos[0];
  auto only = [&](std::initializer_list<const char*> allowed) {
    for (const auto& f : {"cron", "workflow", "version", "input", "correlation-id", "zone",
                          "start", "end", "description", "reason", "count", "catch-up",
                          "paused"}) {
      bool ok = false;
      for (auto* x : allowed)
        ok = ok || std::string{x} == f;
      if (!ok && a.has(f))
        throw usage_error{"schedules " + r.op + " takes no --" + f};
    }
  };
  auto named = [&] {
    if (pos.size() < 2)
      throw usage_error{"schedules " + r.op + " takes the schedule's NAME"};
    r.name = pos[1];
  };
  if (r.op == "create") {
    only({"cron", "workflow", "version", "input", "correlation-id", "zone", "start", "end",
          "description", "catch-up", "paused"});
    named();
    if (!a.value("cron") || !a.value("workflow"))
      throw usage_error{"schedules create needs --cron EXPR and --workflow WF"};
    boost::json::object start{{"name", *a.value("workflow")}};
    if (a.has("version"))
      start["version"] = integer_flag(a, "version", 1, INT32_MAX, 1);
    if (auto input = a.value("input")) {
      boost::system::error_code ec;
      auto v = boost::json::parse(*input, ec);
      if (ec || !v.is_object())
        throw usage_error{"--input: expected a JSON object"};
      start["input"] = v;
    }
    if (auto c = a.value("correlation-id"))
      start["correlationId"] = *c;
    boost::json::object body{{"name", r.name},
                             {"cronExpression", *a.value("cron")},
                             {"startWorkflowRequest", std::move(start)},
                             {"paused", a.has("paused")},
                             {"runCatchupScheduleInstances", a.has("catch-up")}};
    if (auto z = a.value("zone"))
      body["zoneId"] = *z;
    if (auto d = a.value("description"))
      body["description"] = *d;
    if (a.has("start"))
      body["scheduleStartTime"] = integer_flag(a, "start", 0, INT64_MAX / 2, 0);
    if (a.has("end"))
      body["scheduleEndTime"] = integer_flag(a, "end", 0, INT64_MAX / 2, 0);
    r.op = "save";
    r.body = boost::json::serialize(body);
  } else if (r.op == "list") {
    only({"workflow"});
    if (pos.size() > 1)
      throw usage_error{"schedules list takes no name (use --workflow WF to filter)"};
    r.workflow_name = a.value("workflow").value_or("");
  } else if (r.op == "get" || r.op == "resume" || r.op == "delete") {
    only({});
    named();
  } else if (r.op == "pause") {
    only({"reason"});
    named();
    r.reason = a.value("reason").value_or("");
  } else if (r.op == "next") {
    only({"cron", "zone", "count"});
    r.limit = static_cast<int32_t>(integer_flag(a, "count", 1, 100, 5));
    if (pos.size() > 1 && a.has("cron"))
      throw usage_error{"schedules next takes a NAME or --cron EXPR, not both"};
    if (pos.size() > 1) {
      r.name = pos[1];
    } else if (auto c = a.value("cron")) {
      r.cron_expression = *c;
      r.zone_id = a.value("zone").value_or("");
    } else {
      throw usage_error{"schedules next takes a schedule's NAME or --cron EXPR"};
    }
  } else {
    throw usage_error{"unknown schedules action \"" + r.op
                      + "\" (expected create, list, get, pause, resume, delete or next)"};
  }
  bool as_json = a.has("json");
  return [r, as_json](client& c, std::ostream& out, std::ostream& err) mutable {
    if (r.op == "next" && !r.name.empty()) {
      msg::schedule_request get;
      get.op = "get";
      get.name = r.name;
      auto s = c.schedules(get);
      if (!s)
        return fail(err, "schedules next", s.error());
      auto v = boost::json::parse(*s).as_object();
      r.cron_expression = std::string{v.at("cronExpression").as_string()};
      r.zone_id = std::string{v.at("zoneId").as_string()};
      if (const auto* st = v.if_contains("scheduleStartTime"); st && st->is_int64())
        r.start_ms = st->as_int64();
      if (const auto* en = v.if_contains("scheduleEndTime"); en && en->is_int64())
        r.end_ms = en->as_int64();
    }
    return show("schedules", c.schedules(r), as_json, print_schedules, out, err);
  };
}

// Reads the arguments into the action that sends the request; throws
// usage_error for anything a node need not see to reject.
action prepare(const std::string& name, const cli_args& a) {
  const auto& pos = a.positional;
  if (name == "defs") {
    if (pos[0] != "put")
      throw usage_error{"unknown defs action \"" + pos[0] + "\" (expected put)"};
    std::vector<std::string> files(pos.begin() + 1, pos.end());
    std::vector<std::string> texts;
    for (const auto& f : files)
      texts.push_back(read_file(f));
    return [files, texts](client& c, std::ostream& out, std::ostream& err) {
      // Every file is checked before any is sent, so a bad file registers nothing.
      std::ostringstream problems, usage;
      if (validate_files(files, problems, usage) != 0) {
        err << "nodeflow defs put: nothing registered:\n" << problems.str();
        return 1;
      }
      definitions_batch batch{files, texts};
      auto r = c.register_definitions(batch.text);
      if (!r && nf::code_of(r.error()) == nf::errc::invalid) {
        err << "nodeflow defs put: nothing registered:\n"
            << batch.attribute(nf::message_of(r.error()));
        return 1;
      }
      if (!r)
        return fail(err, "defs put", r.error());
      print_registered(batch.task_sources, batch.workflow_sources, *r, out);
      return 0;
    };
  }
  if (name == "start") {
    msg::start_request r;
    r.workflow_name = pos[0];
    r.version = integer_flag(a, "version", 0, INT32_MAX, 0);
    r.input_json = a.value("input").value_or("{}");
    r.idempotency_key = a.value("key").value_or("");
    r.correlation_id = a.value("correlation-id").value_or("");
    r.priority = static_cast<int32_t>(integer_flag(a, "priority", 0, 99, 0));
    r.task_to_domain_json = a.value("task-to-domain").value_or("");
    auto count = integer_flag(a, "count", 1, 1000000, 1);
    if (count > 1 && !r.idempotency_key.empty())
      throw usage_error{"--key names one workflow: it cannot be used with --count"};
    if (count == 1)
      return [r](client& c, std::ostream& out, std::ostream& err) {
        auto reply = c.start(r);
        if (!reply)
          return fail(err, "start", reply.error());
        if (!reply->created)
          out << "idempotency key \"" << r.idempotency_key << "\" already names this workflow:\n";
        out << reply->workflow_id << "\n";
        return 0;
      };
    return [r, count](client& c, std::ostream& out, std::ostream& err) {
      // Many starts in flight at once (the node groups them into few commits).
      constexpr int64_t window = 64;
      std::mutex mx;
      std::condition_variable cv;
      int64_t in_flight = 0, failed = 0;
      for (int64_t i = 0; i < count; ++i) {
        std::unique_lock<std::mutex> lock{mx};
        cv.wait(lock, [&] { return in_flight < window; });
        ++in_flight;
        lock.unlock();
        c.start_async(r, [&](caf::expected<msg::start_reply> reply) {
          std::lock_guard<std::mutex> guard{mx};
          if (reply)
            out << reply->workflow_id << "\n";
          else if (failed++ == 0)
            err << "nodeflow start: " << describe(reply.error()) << "\n";
          --in_flight;
          cv.notify_all();
        });
      }
      std::unique_lock<std::mutex> lock{mx};
      cv.wait(lock, [&] { return in_flight == 0; });
      if (failed > 0)
        err << "nodeflow start: " << failed << " of " << count << " starts failed\n";
      return failed > 0 ? 1 : 0;
    };
  }
  if (name == "get") {
    std::string id = pos[0];
    bool as_json = a.has("json");
    return [id, as_json](client& c, std::ostream& out, std::ostream& err) {
      return show("get", c.get(id), as_json, print_execution, out, err);
    };
  }
  if (name == "events") {
    msg::events_request r;
    r.workflow_id = pos[0];
    r.after_seq = integer_flag(a, "after", 0, INT64_MAX / 2, 0);
    bool follow = a.has("follow");
    bool as_json = a.has("json");
    return [r, follow, as_json](client& c, std::ostream& out, std::ostream& err) mutable {
      // --follow waits for new events until one ends the workflow.
      for (;;) {
        r.wait_ms = follow ? 20000 : 0;
        auto evs = c.events(r);
        if (!evs)
          return fail(err, "events", evs.error());
        bool ended = false;
        for (const auto& e : *evs) {
          if (as_json)
            out << R"({"seq":)" << e.seq << R"(,"at":)" << e.at_ms << R"(,"type":")" << e.type
                << R"(","taskRef":")" << e.task_ref << R"(","payload":)" << e.payload_json << "}\n";
          else
            print_event(e, out);
          r.after_seq = e.seq;
          ended = ended || is_final_event(e.type);
        }
        out.flush();
        if (!follow || ended)
          return 0;
      }
    };
  }
  if (name == "pause" || name == "resume" || name == "terminate" || name == "retry"
      || name == "rerun" || name == "restart" || name == "skip" || name == "remove"
      || name == "decide" || name == "resetcallbacks") {
    msg::workflow_command cmd;
    cmd.op = name;
    cmd.workflow_id = pos[0];
    cmd.reason = a.value("reason").value_or("");
    if (name == "rerun" || name == "skip") {
      auto task = a.value("task");
      if (!task)
        throw usage_error{name + " needs --task REF"};
      cmd.task_ref = *task;
    }
    if (name == "rerun")
      cmd.iteration = static_cast<int32_t>(integer_flag(a, "iteration", 0, INT32_MAX, 0));
    cmd.input_json = a.value("input").value_or("");
    cmd.output_json = a.value("output").value_or("");
    return [cmd](client& c, std::ostream& out, std::ostream& err) {
      auto r = c.command(cmd);
      if (!r)
        return fail(err, cmd.op, r.error());
      out << cmd.op << " " << cmd.workflow_id << ": " << (r->empty() ? "ok" : *r) << "\n";
      return 0;
    };
  }
  if (name == "signal") {
    std::string id = pos[0], sig = pos[1];
    std::string payload = a.value("payload").value_or("null");
    return [id, sig, payload](client& c, std::ostream& out, std::ostream& err) {
      auto r = c.signal(id, sig, payload);
      if (!r)
        return fail(err, "signal", r.error());
      out << "signal " << sig << " delivered to " << id << "\n";
      return 0;
    };
  }
  if (name == "search") {
    msg::search_request r;
    r.status = a.value("status").value_or("");
    r.workflow_name = a.value("name").value_or("");
    r.started_after_ms = integer_flag(a, "started-after", 0, INT64_MAX / 2, 0);
    r.limit = static_cast<int32_t>(integer_flag(a, "limit", 1, 1000, 50));
    r.cursor = a.value("cursor").value_or("");
    bool as_json = a.has("json");
    return [r, as_json](client& c, std::ostream& out, std::ostream& err) {
      auto page = c.search(r);
      if (!page)
        return fail(err, "search", page.error());
      if (as_json)
        out << R"({"items":)" << page->items_json << R"(,"nextCursor":)"
            << (page->next_cursor.empty() ? "null" : "\"" + page->next_cursor + "\"") << "}\n";
      else
        print_search_page(*page, out);
      return 0;
    };
  }
  if (name == "deadletters") {
    msg::deadletter_request r;
    r.op = pos[0];
    bool as_json = a.has("json");
    if (r.op == "list") {
      if (pos.size() > 1)
        throw usage_error{"deadletters list takes no ids (use --after ID to page)"};
      r.after_id = integer_flag(a, "after", 0, INT64_MAX / 2, 0);
      r.limit = static_cast<int32_t>(integer_flag(a, "limit", 1, 1000, 100));
    } else if (r.op == "replay") {
      if (a.has("after") || a.has("limit"))
        throw usage_error{"deadletters replay takes ids, not --after/--limit"};
      for (size_t i = 1; i < pos.size(); ++i) {
        const auto& s = pos[i];
        if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos
            || std::stoll(s) == 0)
          throw usage_error{"dead-letter ids are positive integers, got \"" + s + "\""};
        r.ids.push_back(std::stoll(s));
      }
    } else {
      throw usage_error{"unknown deadletters action \"" + r.op + "\" (expected list or replay)"};
    }
    // A replay answers only a count: shown as it came.
    return [r, as_json](client& c, std::ostream& out, std::ostream& err) {
      return show("deadletters", c.deadletters(r), as_json || r.op == "replay",
                  print_dead_letters, out, err);
    };
  }
  if (name == "task-executions") {
    msg::task_history_query q;
    q.task_def_name = pos[0];
    q.limit = static_cast<int32_t>(integer_flag(a, "limit", 1, 1000, 100));
    q.cursor = a.value("before").value_or("");
    bool as_json = a.has("json");
    return [q, as_json](client& c, std::ostream& out, std::ostream& err) {
      return show("task-executions", c.task_history(q), as_json, print_task_history, out, err);
    };
  }
  if (name == "schedules")
    return prepare_schedules(a);
  if (name == "namespaces") {
    msg::namespace_request r;
    r.op = pos[0];
    if (r.op == "list") {
      if (pos.size() > 1)
        throw usage_error{"namespaces list takes no name"};
    } else if (r.op == "create" || r.op == "remove") {
      if (pos.size() < 2)
        throw usage_error{"namespaces " + r.op + " takes the namespace's NAME"};
      r.name = pos[1];
    } else {
      throw usage_error{"unknown namespaces action \"" + r.op
                        + "\" (expected list, create or remove)"};
    }
    // A create or a remove answers what it did: shown as it came.
    bool as_json = a.has("json") || r.op != "list";
    return [r, as_json](client& c, std::ostream& out, std::ostream& err) {
      return show("namespaces", c.namespaces(r), as_json, print_namespaces, out, err);
    };
  }
  // status
  bool as_json = a.has("json");
  return [as_json](client& c, std::ostream& out, std::ostream& err) {
    return show("status", c.status(), as_json, print_status, out, err);
  };
}

} // namespace

bool is_client_command(const std::string& name) {
  return specs().count(name) > 0;
}

const char* client_usage() {
  return "  defs put FILE...                 register task and workflow definitions (all or none)\n"
         "  start NAME [--version V] [--input JSON] [--key K] [--correlation-id C]\n"
         "             [--priority P] [--task-to-domain JSON] [--count N]\n"
         "                                   start executions (prints their ids)\n"
         "  get ID [--json]                  show an execution and its tasks\n"
         "  events ID [--follow] [--after SEQ] [--json]   an execution's history\n"
         "  pause|resume|terminate|retry ID [--reason R]\n"
         "  rerun ID --task REF [--iteration N] [--input JSON]\n"
         "  restart ID [--input JSON]\n"
         "  signal ID NAME [--payload JSON]  deliver a signal (completes a WAIT for it)\n"
         "  search [--status S] [--name N] [--started-after MS] [--limit N] [--cursor C] [--json]\n"
         "  deadletters list [--after ID] [--limit N] | deadletters replay [ID...]\n"
         "  status [--json]                  node, partitions, queue depths\n"
         "  task-executions NAME [--limit N] [--before C] [--json]\n"
         "                                   a task definition's executions, newest first\n"
         "  namespaces list|create NAME|remove NAME   manage namespaces\n"
         "  schedules create NAME --cron EXPR --workflow WF [--zone Z] [--input JSON] …\n"
         "  schedules list [--workflow WF] | get|pause|resume|delete NAME | next NAME|--cron EXPR\n"
         "                                   workflow schedules (cron with seconds, time zones)\n"
         "  client commands take --node HOST:PORT (default $NODEFLOW_NODE, else "
         "127.0.0.1:4510),\n"
         "  --namespace NAME (default $NODEFLOW_NAMESPACE, else default; a key acts in its own)\n"
         "  and --timeout MS (default 30000); they log in with the API key in\n"
         "  $NODEFLOW_KEY_ID and $NODEFLOW_KEY_SECRET (nodeflow keys create)\n";
}

int run_client_command(const std::string& name, int argc, char** argv, std::ostream& out,
                       std::ostream& err) {
  const auto& s = specs().at(name);
  auto usage = [&](const std::string& problem) {
    err << "nodeflow " << name << ": " << problem << "\nusage: nodeflow " << s.usage
        << " [--node HOST:PORT] [--namespace NAME] [--timeout MS]\n";
    return 2;
  };
  auto values = s.value_flags;
  values.emplace_back("node");
  values.emplace_back("timeout");
  values.emplace_back("namespace");
  std::string error;
  auto args = parse_args(argc, argv, 0, values, s.switch_flags, error);
  if (!args)
    return usage(error);
  if (args->positional.size() < s.min_positional)
    return usage("missing arguments");
  if (args->positional.size() > s.max_positional)
    return usage("unexpected argument " + args->positional[s.max_positional]);
  std::string address = "127.0.0.1:4510";
  if (const char* env = std::getenv("NODEFLOW_NODE"); env != nullptr && *env != '\0')
    address = env;
  if (auto node = args->value("node"))
    address = *node;
  auto opts = parse_node_address(address);
  if (!opts)
    return usage(describe(opts.error()));
  if (const char* env = std::getenv("NODEFLOW_NAMESPACE"); env != nullptr && *env != '\0')
    opts->namespace_name = env;
  if (auto ns = args->value("namespace"))
    opts->namespace_name = *ns;
  key_from_environment(*opts);
  action act;
  try {
    opts->timeout = std::chrono::milliseconds{integer_flag(*args, "timeout", 1, 3600000, 30000)};
    act = prepare(name, *args);
  } catch (const usage_error& e) {
    return usage(e.message);
  }
  client c{*opts};
  return act(c, out, err);
}

} // namespace nf::cmd
