#define CAF_SUITE http.metrics

// GET /metrics as Prometheus reads it: every line parsed (HELP and TYPE for every family,
// names and labels well formed, counters ending in _total, histogram buckets cumulative up
// to +Inf and equal to _count), then moved by work: workflows started and ended by name,
// tasks leased and ended by type, the scrape itself among the HTTP requests, the node's
// partitions, and the store's part read at scrape.

#include <caf/test/dsl.hpp>

#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

struct parsed {
  /// Sample key (`name{a="x",b="y"}`, labels in the order written) → value.
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;  ///< family → type
  std::vector<std::string> problems;

  double at(const std::string& key) const {
    auto it = samples.find(key);
    return it == samples.end() ? 0.0 : it->second;
  }
  bool has(const std::string& key) const { return samples.count(key) != 0; }
};

bool name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool name_char(char c) {
  return name_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Parses and checks the exposition; what is wrong goes to `problems`, one line each.
parsed parse_exposition(const std::string& text) {
  parsed out;
  std::set<std::string> helped;
  std::set<std::string> seen_samples_of;  // families whose samples began
  // Histogram state per (family, labels without le): last bucket count and whether +Inf came.
  std::map<std::string, std::pair<double, bool>> buckets;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  auto bad = [&](const std::string& why) {
    out.problems.push_back("line " + std::to_string(n) + ": " + why + ": " + line);
  };
  if (text.empty() || text.back() != '\n')
    out.problems.push_back("the text does not end in a newline");
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) {
      bad("empty line");
      continue;
    }
    if (line[0] == '#') {
      std::istringstream w(line);
      std::string hash, what, name;
      w >> hash >> what >> name;
      if (what == "HELP") {
        if (!helped.insert(name).second)
          bad("second HELP");
      } else if (what == "TYPE") {
        std::string type;
        w >> type;
        if (!helped.count(name))
          bad("TYPE before HELP");
        if (out.types.count(name))
          bad("second TYPE");
        if (seen_samples_of.count(name))
          bad("TYPE after samples");
        if (type != "counter" && type != "gauge" && type != "histogram")
          bad("unknown type");
        if (type == "counter" && !ends_with(name, "_total"))
          bad("counter not ending in _total");
        out.types[name] = type;
      } else {
        bad("a comment that is neither HELP nor TYPE");
      }
      continue;
    }
    size_t i = 0;
    if (!name_start(line[0])) {
      bad("bad metric name");
      continue;
    }
    while (i < line.size() && name_char(line[i]))
      ++i;
    std::string name = line.substr(0, i);
    std::string labels;      // as written, without le
    std::string le;
    bool ok = true;
    if (i < line.size() && line[i] == '{') {
      ++i;
      bool first = true;
      while (i < line.size() && line[i] != '}') {
        if (!first) {
          if (line[i] != ',') { ok = false; break; }
          ++i;
        }
        first = false;
        size_t s = i;
        if (i >= line.size() || !(std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '_')) {
          ok = false;
          break;
        }
        while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
          ++i;
        std::string lname = line.substr(s, i - s);
        if (line.compare(i, 2, "=\"") != 0) { ok = false; break; }
        i += 2;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size()) { ok = false; break; }
            char e = line[i + 1];
            if (e != '\\' && e != '"' && e != 'n') { ok = false; break; }
            value += e == 'n' ? '\n' : e;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (!ok || i >= line.size()) { ok = false; break; }
        ++i;  // closing quote
        if (lname == "le")
          le = value;
        else
          labels += (labels.empty() ? "" : ",") + lname + "=\"" + value + "\"";
      }
      if (!ok || i >= line.size()) {
        bad("bad labels");
        continue;
      }
      ++i;  // }
    }
    if (i >= line.size() || line[i] != ' ') {
      bad("no space before the value");
      continue;
    }
    auto vtext = line.substr(i + 1);
    double v = 0;
    if (vtext == "+Inf")
      v = HUGE_VAL;
    else {
      size_t used = 0;
      try {
        v = std::stod(vtext, &used);
      } catch (...) {
        used = 0;
      }
      if (used != vtext.size() || vtext.empty()) {
        bad("bad value");
        continue;
      }
    }
    // The family: the name itself, or a histogram's less its suffix.
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      auto base = ends_with(name, suffix) ? name.substr(0, name.size() - std::string{suffix}.size())
                                          : std::string{};
      if (!base.empty() && out.types.count(base) && out.types[base] == "histogram")
        family = base;
    }
    if (!helped.count(family) || !out.types.count(family)) {
      bad("a sample of a family without HELP or TYPE");
      continue;
    }
    seen_samples_of.insert(family);
    const auto& type = out.types[family];
    auto key = name + "{" + labels + "}";
    if (type == "histogram") {
      auto series = family + "{" + labels + "}";
      if (name == family + "_bucket") {
        if (le.empty()) {
          bad("a bucket without le");
          continue;
        }
        auto& [last, inf] = buckets[series];
        if (inf)
          bad("a bucket after +Inf");
        if (v < last)
          bad("buckets not cumulative");
        last = v;
        if (le == "+Inf") {
          inf = true;
          out.samples[family + "_inf{" + labels + "}"] = v;
        }
        continue;
      }
      if (name == family + "_count") {
        auto it = buckets.find(series);
        if (it == buckets.end() || !it->second.second)
          bad("_count before the +Inf bucket");
        else if (it->second.first != v)
          bad("_count differs from the +Inf bucket");
      }
    } else if (!le.empty()) {
      bad("le on a sample that is not a bucket");
    }
    if (out.samples.count(key))
      bad("the same sample twice");
    out.samples[key] = v;
  }
  return out;
}

struct fixture {
  test::e2e_fixture f{"http_metrics"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }

  parsed scrape() {
    auto r = http->get("/metrics");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    CAF_CHECK_EQUAL(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    auto p = parse_exposition(r.body);
    for (const auto& why : p.problems)
      CAF_FAIL("/metrics: " << why);
    return p;
  }
};

const std::string scrape_requests =
  R"(nodeflow_http_requests_total{route="/metrics",method="GET",status="200"})";

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_metrics, fixture)

CAF_TEST(metrics parse and move with the work done) {
  auto before = scrape();
  // Every family the node declares is there before anything happened.
  for (const char* family :
       {"nodeflow_workflows_started_total", "nodeflow_workflows_ended_total",
        "nodeflow_tasks_ended_total", "nodeflow_tasks_leased_total",
        "nodeflow_task_leases_expired_total", "nodeflow_decide_flush_seconds",
        "nodeflow_decide_batch_requests", "nodeflow_decide_batch_workflows",
        "nodeflow_http_requests_total", "nodeflow_http_request_duration_seconds",
        "nodeflow_store_worker_wait_seconds", "nodeflow_partitions_owned",
        "nodeflow_queue_ready_tasks", "nodeflow_queue_leased_tasks",
        "nodeflow_queue_oldest_ready_age_seconds", "nodeflow_decide_pending",
        "nodeflow_decide_oldest_pending_age_seconds", "nodeflow_outbox_backlog",
        "nodeflow_outbox_dead_letters", "nodeflow_store_read_up",
        "nodeflow_forwarded_report_batch"})
    if (before.types.count(family) != 1)
      CAF_FAIL(family << " is missing");
  CAF_CHECK(before.at("nodeflow_partitions_owned{}") > 0);
  CAF_CHECK_EQUAL(before.at("nodeflow_store_read_up{}"), 1.0);
  CAF_CHECK(before.has("nodeflow_decide_pending{}"));
  CAF_CHECK(before.has("nodeflow_outbox_dead_letters{}"));

  // The first scrape is among the requests the second one counts: exactly one more.
  auto again = scrape();
  CAF_CHECK_EQUAL(again.at(scrape_requests) - before.at(scrape_requests), 1.0);
  CAF_CHECK(again.at(R"(nodeflow_http_request_duration_seconds_count{route="/metrics",method="GET"})")
            >= 1.0);
  CAF_CHECK(again.at("nodeflow_store_worker_wait_seconds_count{}") >= 2.0);

  f.define(R"([{"name": "m_echo", "retryCount": 0, "responseTimeoutSeconds": 30},
    {"name": "m_bad", "retryCount": 0, "responseTimeoutSeconds": 30},
    {"name": "m_flow", "version": 1, "tasks": [
      {"name": "m_echo", "taskReferenceName": "one"},
      {"name": "m_echo", "taskReferenceName": "two"}]},
    {"name": "m_fail", "version": 1, "tasks": [
      {"name": "m_bad", "taskReferenceName": "bad"}]}])");
  auto base = scrape();
  test::worker_pool echo{f.client_opts(), {"m_echo"}, 2, test::echo_handler()};
  test::worker_pool failing{f.client_opts(), {"m_bad"}, 1, [](const msg::leased_task&) {
                              return test::task_outcome::failed("on purpose");
                            }};
  constexpr int flows = 5;
  std::vector<std::string> ids;
  for (int i = 0; i < flows; ++i)
    ids.push_back(f.start("m_flow", R"({"i":)" + std::to_string(i) + "}"));
  auto failed_id = f.start("m_fail");
  for (const auto& id : ids)
    CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  CAF_REQUIRE_EQUAL(f.await_end(failed_id), "FAILED");

  const std::string completed = R"(nodeflow_workflows_ended_total{workflow="m_flow",status="completed"})";
  const std::string failed = R"(nodeflow_workflows_ended_total{workflow="m_fail",status="failed"})";
  // The counters move right after the commit the status is read from: wait for them.
  parsed after;
  CAF_CHECK(f.await([&] {
    after = scrape();
    return after.at(completed) - base.at(completed) >= flows
           && after.at(failed) - base.at(failed) >= 1;
  }, 10s));
  auto moved = [&](const std::string& key) { return after.at(key) - base.at(key); };
  CAF_CHECK_EQUAL(moved(R"(nodeflow_workflows_started_total{workflow="m_flow"})"), flows);
  CAF_CHECK_EQUAL(moved(R"(nodeflow_workflows_started_total{workflow="m_fail"})"), 1.0);
  CAF_CHECK_EQUAL(moved(completed), flows);
  CAF_CHECK_EQUAL(moved(failed), 1.0);
  CAF_CHECK_EQUAL(moved(R"(nodeflow_workflows_ended_total{workflow="m_flow",status="failed"})"), 0.0);
  CAF_CHECK_EQUAL(moved(R"(nodeflow_tasks_ended_total{task_type="m_echo",status="completed"})"),
                  2.0 * flows);
  CAF_CHECK_EQUAL(moved(R"(nodeflow_tasks_ended_total{task_type="m_bad",status="failed"})"), 1.0);
  CAF_CHECK_EQUAL(moved(R"(nodeflow_tasks_leased_total{task_type="m_echo"})"), 2.0 * flows);
  CAF_CHECK_EQUAL(moved(R"(nodeflow_tasks_leased_total{task_type="m_bad"})"), 1.0);
  CAF_CHECK(moved("nodeflow_decide_flush_seconds_count{}") > 0);
  CAF_CHECK(moved("nodeflow_decide_batch_requests_count{}") > 0);
  CAF_CHECK(after.at(scrape_requests) - base.at(scrape_requests) >= 1.0);
  CAF_CHECK(after.at("nodeflow_partitions_owned{}") > 0);
  CAF_CHECK_EQUAL(after.at("nodeflow_store_read_up{}"), 1.0);
  echo.stop();
  failing.stop();
}

CAF_TEST(a queue with waiting work shows its depth and age) {
  f.define(R"([{"name": "m_idle", "retryCount": 0},
    {"name": "m_wait", "version": 1, "tasks": [{"name": "m_idle", "taskReferenceName": "t"}]}])");
  f.start("m_wait");
  f.start("m_wait");
  // No worker polls m_idle: both tasks wait ready in its queue.
  parsed p;
  CAF_CHECK(f.await([&] {
    p = scrape();
    return p.at(R"(nodeflow_queue_ready_tasks{queue="m_idle"})") == 2.0;
  }, 10s));
  CAF_CHECK_EQUAL(p.at(R"(nodeflow_queue_leased_tasks{queue="m_idle"})"), 0.0);
  CAF_CHECK(p.has(R"(nodeflow_queue_oldest_ready_age_seconds{queue="m_idle"})"));
  CAF_CHECK(p.at(R"(nodeflow_queue_oldest_ready_age_seconds{queue="m_idle"})") >= 0.0);
}

CAF_TEST_FIXTURE_SCOPE_END()
