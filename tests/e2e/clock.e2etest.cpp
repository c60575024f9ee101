#define CAF_SUITE e2e.clock
#include "caf/test/unit_test.hpp"

#include <cstdlib>
#include <unistd.h>

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// libfaketime's thread-safe build (Debian's faketime package, scripts/deps.sh --tests).
constexpr const char* libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

// The node is started with these in its environment (execv passes ours on); the test
// process itself was already running, so its own clock stays true.
struct faked_clock_env {
  explicit faked_clock_env(const char* shift) {
    ::setenv("LD_PRELOAD", libfaketime, 1);
    ::setenv("FAKETIME", shift, 1);
    ::setenv("FAKETIME_DONT_FAKE_MONOTONIC", "1", 1);
  }
  ~faked_clock_env() {
    ::unsetenv("LD_PRELOAD");
    ::unsetenv("FAKETIME");
    ::unsetenv("FAKETIME_DONT_FAKE_MONOTONIC");
  }
};

} // namespace

// A node whose clock runs 15 minutes ahead of Postgres's. Workflow ids are uuidv7 made by
// the node, and "startedAt" = uuid_extract_timestamp(id) is the partition key of the
// executions and the tables keyed with them: the ids must carry Postgres's clock, or the
// rows land 900 s off, in the wrong partitions. A WAIT of 3 s is timed by Postgres's clock
// too, so it neither fires early nor waits the shift out.
CAF_TEST(ids_and_timers_follow_postgres_clock_not_the_nodes) {
  if (::access(libfaketime, R_OK) != 0) {
    CAF_MESSAGE("SKIPPED: libfaketime is missing (" << libfaketime
                                                    << "; install the faketime package)");
    return;
  }
  test::e2e_fixture f{"e2e_clock"};
  {
    faked_clock_env fake{"+15m"};
    f.start_node();
  }
  f.define(R"([{"name": "e2e_clock_nap", "version": 1, "tasks": [
    {"name": "nap", "taskReferenceName": "nap", "type": "WAIT", "inputParameters": {"duration": "3s"}}]}])");
  constexpr int n = 6;
  std::vector<std::string> ids;
  std::vector<std::chrono::steady_clock::time_point> started;
  for (int i = 0; i < n; ++i) {
    started.push_back(std::chrono::steady_clock::now());
    ids.push_back(f.start("e2e_clock_nap", "{}"));
  }
  for (const auto& id : ids) {
    auto skew = std::stod(f.scalar(
      R"(SELECT abs(extract(epoch FROM "startedAt" - now())) FROM "WorkflowExecutions" WHERE "id" = $1)",
      store::params::of(id)));
    CAF_MESSAGE("workflow " << id << ": startedAt is " << skew << " s from Postgres's now()");
    CAF_CHECK_LESS(skew, 5.0);
  }
  for (int i = 0; i < n; ++i) {
    CAF_REQUIRE_EQUAL(f.await_end(ids[i], 90s), "COMPLETED");
    auto took = std::chrono::steady_clock::now() - started[i];
    auto took_s = std::chrono::duration<double>(took).count();
    CAF_MESSAGE("workflow " << ids[i] << ": ended " << took_s << " s after its start was sent");
    CAF_CHECK_GREATER_OR_EQUAL(took_s, 3.0);
    auto ran = std::stod(f.scalar(
      R"(SELECT extract(epoch FROM "endedAt" - "startedAt") FROM "WorkflowExecutions" WHERE "id" = $1)",
      store::params::of(ids[i])));
    CAF_MESSAGE("workflow " << ids[i] << ": ran " << ran << " s by its stored times");
    CAF_CHECK_GREATER_OR_EQUAL(ran, 2.9);
    CAF_CHECK_LESS(ran, 30.0);
  }
  CAF_CHECK(f.stop_node());
}
