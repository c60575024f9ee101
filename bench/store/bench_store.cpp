// Store benchmark: rows/s of the engine's hot store operations at batch sizes
// 1 and 100, beside a plain single-row INSERT baseline measured in the same run
// on the same server, right before each operation. Prints one JSON object per line.
//
//   bench_store --dsn DSN [--rows N] [--quick]
//
// DSN names a Postgres 18 the benchmark may create a database on; it creates
// `nf_bench_<pid>`, migrates it, and drops it at the end.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <unistd.h>

#include "flow/parse.hpp"
#include "store/decisions.hpp"
#include "store/definitions.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/queues.hpp"
#include "store/tasks.hpp"
#include "store/workflows.hpp"
#include "bench/support/bench_support.hpp"

using namespace nf;
using namespace nf::bench;
using namespace nf::store;

namespace {

void report(const char* op, int batch, int rows, double secs, double baseline) {
  double rps = rows / secs;
  std::printf("{\"bench\":\"store\",\"op\":\"%s\",\"batch\":%d,\"rows\":%d,\"seconds\":%.3f,"
              "\"rows_per_s\":%.0f,\"x_baseline\":%.2f}\n",
              op, batch, rows, secs, rps, baseline > 0 ? rps / baseline : 0.0);
  std::fflush(stdout);
}

// The baseline is a plain single-row INSERT per transaction into a narrow
// table: what "one row per round trip" costs on this server. Not constexpr:
// the bench table is not part of the schema catalog.
const statement baseline_table{
  "bench.baseline_table",
  R"(CREATE TABLE "BenchBaseline" ("id" BIGSERIAL PRIMARY KEY, "queueName" TEXT NOT NULL,
       "payload" JSONB NOT NULL))"};
const statement baseline_insert{
  "bench.baseline_insert",
  R"(INSERT INTO "BenchBaseline" ("queueName", "payload") VALUES ($1, $2))"};

/// Claims up to `want` pending evaluations of one shard, as the decider of
/// that partition does, and writes one SIMPLE task per workflow: the
/// decider's apply path with a trivial decision.
int decide_round(connection& conn, int16_t shard, int want) {
  auto n = perform(conn, [&](transaction& tx) -> caf::expected<int> {
    std::vector<workflow_id> ids;
    auto claims = claim_decide_batch(tx, {shard_id{shard}}, want);
    if (!claims)
      return std::move(claims.error());
    for (auto& c : *claims)
      ids.push_back(c.id);
    if (ids.empty())
      return 0;
    auto snaps = load_snapshots(tx, ids);
    if (!snaps)
      return std::move(snaps.error());
    std::vector<decision_write> writes;
    for (auto& s : *snaps) {
      decision_write w;
      w.id = s.id;
      w.expected_version = s.version;
      w.ns = s.ns;
      w.shard = s.shard;
      w.priority = s.priority;
      task_insert t;
      t.identity = flow::task_identity{"work", 0, 0};
      t.type = flow::task_type::simple;
      t.task_def_name = "bench_task";
      t.queue = "bench";
      t.input = json(boost::json::object{{"n", 1}});
      w.inserts.push_back(std::move(t));
      w.seen = s.unprocessed();
      event_write e;
      e.type = "TASK_SCHEDULED";
      e.identity = flow::task_identity{"work", 0, 0};
      w.events.push_back(std::move(e));
      writes.push_back(std::move(w));
    }
    if (auto r = apply_decisions(tx, writes); !r)
      return std::move(r.error());
    return static_cast<int>(writes.size());
  });
  return must(std::move(n), "apply decisions");
}

} // namespace

int main(int argc, char** argv) {
  bench::program = "bench_store";
  std::string dsn;
  int rows = 2000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dsn" && i + 1 < argc)
      dsn = argv[++i];
    else if (a == "--rows" && i + 1 < argc)
      rows = std::atoi(argv[++i]);
    else if (a == "--quick")
      rows = 200;
    else {
      std::fprintf(stderr, "usage: bench_store --dsn DSN [--rows N] [--quick]\n");
      return 2;
    }
  }
  if (dsn.empty() && std::getenv("NODEFLOW_DSN"))
    dsn = std::getenv("NODEFLOW_DSN");
  if (dsn.empty() || rows < 100) {
    std::fprintf(stderr, "bench_store: need --dsn DSN (or NODEFLOW_DSN) and --rows >= 100\n");
    return 2;
  }
  // Batch-1 runs are ~50x slower; a quarter of the rows keeps them short.
  const int single_rows = rows / 4;

  scratch_database db{dsn, "nf_bench_" + std::to_string(getpid())};
  auto conn = db.connect_migrated();
  int partitions = must(load_partition_count(conn), "partition count");
  must(put_workflow_def_json(conn, default_namespace,
                             R"({"name":"bench","version":1,"tasks":[
                               {"name":"bench_task","taskReferenceName":"work","type":"SIMPLE"}]})"),
       "register workflow");

  // Baseline: single-row INSERT, one transaction each. It is measured again right before each
  // operation and each operation is compared with the measurement beside it: a commit's cost
  // (an fsync) drifts by several times on a shared machine within one run.
  must(conn.run(baseline_table), "baseline table");
  int baseline_rows_done = 0;
  auto measure_baseline = [&] {
    const int n = std::max(100, single_rows / 2);
    auto t0 = clock_type::now();
    for (int i = 0; i < n; ++i, ++baseline_rows_done)
      must(conn.run(baseline_insert,
                    params::of("bench", json(boost::json::object{{"i", baseline_rows_done}}))),
           "baseline insert");
    double secs = seconds_since(t0);
    report("single_row_insert", 1, n, secs, n / secs);
    return n / secs;
  };

  // Workflows to decide: starts are batched 100 per transaction.
  for (int done = 0; done < single_rows + rows;) {
    int n = std::min(100, single_rows + rows - done);
    std::vector<start_request> reqs(n);
    for (auto& r : reqs) {
      r.name = "bench";
      r.input = boost::json::object{{"x", 1}};
    }
    auto started = perform(conn, [&](transaction& tx) { return start_workflows(tx, reqs, partitions); });
    if (!started)
      die("start workflows", started.error());
    done += n;
  }

  struct phase {
    int batch;
    int rows;
  };
  double baseline = measure_baseline();
  for (auto p : {phase{1, single_rows}, phase{100, rows}}) {
    auto t = clock_type::now();
    int done = 0;
    int empty_shards = 0;
    for (int16_t shard = 0; done < p.rows && empty_shards < partitions;
         shard = static_cast<int16_t>((shard + 1) % partitions)) {
      int n = decide_round(conn, shard, std::min(p.batch, p.rows - done));
      empty_shards = n == 0 ? empty_shards + 1 : 0;
      done += n;
    }
    report("apply_decision", p.batch, done, seconds_since(t), baseline);
  }

  std::vector<leased_task> leased;
  baseline = measure_baseline();
  for (auto p : {phase{1, single_rows}, phase{100, rows}}) {
    auto t = clock_type::now();
    int done = 0;
    while (done < p.rows) {
      lease_request req;
      req.queue = "bench";
      req.max_tasks = std::min(p.batch, p.rows - done);
      req.worker_id = "bench";
      auto got = must(lease_tasks(conn, req), "lease");
      if (got.empty())
        break;
      done += static_cast<int>(got.size());
      for (auto& g : got)
        leased.push_back(std::move(g));
    }
    report("lease_batch", p.batch, done, seconds_since(t), baseline);
  }

  size_t next = 0;
  baseline = measure_baseline();
  for (auto p : {phase{1, single_rows}, phase{100, rows}}) {
    auto t = clock_type::now();
    int done = 0;
    while (done < p.rows && next < leased.size()) {
      std::vector<task_result> batch;
      for (int i = 0; i < p.batch && done + i < p.rows && next < leased.size(); ++i, ++next) {
        task_result r;
        r.workflow = leased[next].workflow;
        r.task = leased[next].task;
        r.token = leased[next].token;
        r.output = json(boost::json::object{{"ok", true}});
        batch.push_back(std::move(r));
      }
      auto outcomes = must(complete_tasks(conn, batch), "complete");
      for (auto o : outcomes)
        if (o != completion::done) {
          std::fprintf(stderr, "bench_store: a completion was not accepted\n");
          return 1;
        }
      done += static_cast<int>(batch.size());
    }
    report("complete", p.batch, done, seconds_since(t), baseline);
  }
  return 0;
}
