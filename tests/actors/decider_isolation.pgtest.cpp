#define CAF_SUITE actors.decider_isolation

// Group commit shares one transaction among every request of a flush: a value Postgres
// refuses in one of them (an idempotency key past the btree row limit, text that is not
// UTF-8) must fail that request alone, with an error naming what it can, while the starts
// and completions committed with it are applied (decider_core::run_apart).

#include "tests/actors/decider_fixture.hpp"

#include "engine/decide/batch.hpp"
#include "proto/errors.hpp"

using namespace nf;

/// CAF_CHECK for a caf::expected that prints the error's message when it fails.
#define NF_CHECK_OK(expr)                                                                    \
  do {                                                                                     \
    const auto& nf_result_ = (expr);                                                       \
    if (!nf_result_)                                                                       \
      CAF_CHECK_EQUAL(::nf::message_of(nf_result_.error()), "no error");                 \
  } while (false)

namespace {

constexpr const char* one_step = R"({"name": "one", "version": 1, "tasks": [
  {"name": "work", "taskReferenceName": "a", "type": "SIMPLE"}]})";

/// `n` printable bytes that no compression shortens below the btree row limit.
std::string incompressible(size_t n) {
  std::string s;
  uint32_t x = 2463534242u;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s.push_back(static_cast<char>(33 + x % 94));
  }
  return s;
}

store::start_request one_start() {
  store::start_request r;
  r.name = "one";
  r.id = engine::new_workflow_id_in(0, 1);
  return r;
}

store::task_result completed(const store::leased_task& t) {
  return {t.workflow, t.task, t.token, store::task_outcome::completed,
          store::json(boost::json::object{{"y", 1}}), std::nullopt};
}

struct fixture : test::decider_fixture {
  fixture() : decider_fixture("actors_decider_isolation") {
    task_defs(R"([{"name": "work", "retryCount": 0, "responseTimeoutSeconds": 600}])");
    workflow_def(one_step);
  }

  /// `n` workflows of "one" started and decided, their tasks leased.
  std::vector<store::leased_task> leased(engine::decider_core& core, int n) {
    for (int i = 0; i < n; ++i) {
      store::start_request req;
      req.name = "one";
      NF_REQUIRE_OK(store::start_workflow(conn, req, 1));
    }
    core.run({});
    auto got = lease("work", n);
    CAF_REQUIRE_EQUAL(got.size(), static_cast<size_t>(n));
    return got;
  }

  int64_t task_status(const store::leased_task& t, const std::string& status) {
    return count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1 AND "status" = $2)",
                 store::params::of(t.task.str(), status));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(decider_isolation_tests, fixture)

CAF_TEST(a start whose key breaks the index row limit fails alone and the batch commits) {
  engine::decider_core core{1, db->dsn(), 100};
  core.serve({0});
  auto tasks = leased(core, 4);
  engine::batch_input in;
  for (int i = 0; i < 5; ++i)
    in.starts.push_back(one_start());
  // 3.5 KB: past the ~2.7 KB a btree row may take, so only the insert can refuse it.
  in.starts[2].idempotency_key = incompressible(3500);
  in.starts[4].idempotency_key = "ordinary-key";
  for (const auto& t : tasks)
    in.completions.push_back(completed(t));
  auto out = core.run(in);
  CAF_REQUIRE_EQUAL(out.starts.size(), 5u);
  CAF_REQUIRE_EQUAL(out.completions.size(), 4u);
  for (size_t i = 0; i < 5; ++i) {
    if (i == 2)
      continue;
    NF_REQUIRE_OK(out.starts[i]);
    CAF_CHECK(out.starts[i]->created);
    CAF_CHECK_EQUAL(tasks_of(in.starts[i].id->str(), "a"), 1);
  }
  CAF_REQUIRE(!out.starts[2]);
  CAF_CHECK(nf::code_of(out.starts[2].error()) == nf::errc::invalid);
  CAF_CHECK_EQUAL(nf::sqlstate_of(out.starts[2].error()), "54000");
  CAF_CHECK_EQUAL(nf::message_of(out.starts[2].error()).rfind("idempotency_key: ", 0), 0u);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "id" = $1)",
                        store::params::of(in.starts[2].id->str())),
                  0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    NF_CHECK_OK(out.completions[i]);
    CAF_CHECK_EQUAL(task_status(tasks[i], "COMPLETED"), 1);
    CAF_CHECK_EQUAL(status_of(tasks[i].workflow.str()), "COMPLETED");
  }
  // The halves were more transactions than one, and the core goes on as before.
  CAF_CHECK(out.stats.attempts > 1);
  engine::batch_input next;
  next.starts.push_back(one_start());
  auto again = core.run(next);
  NF_CHECK_OK(again.starts.at(0));
  CAF_CHECK_EQUAL(again.stats.attempts, 1);
}

CAF_TEST(a completion whose reason is not UTF-8 fails alone and the others commit) {
  engine::decider_core core{1, db->dsn(), 100};
  core.serve({0});
  auto tasks = leased(core, 6);
  engine::batch_input in;
  for (const auto& t : tasks)
    in.completions.push_back(completed(t));
  // The client protocol carries any bytes: Postgres refuses them (22021) where it writes the
  // reason.
  in.completions[3].outcome = store::task_outcome::failed;
  in.completions[3].reason = std::string{"broken \xff\xfe reason"};
  in.starts.push_back(one_start());
  auto out = core.run(in);
  CAF_REQUIRE_EQUAL(out.completions.size(), 6u);
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i == 3)
      continue;
    NF_CHECK_OK(out.completions[i]);
    CAF_CHECK_EQUAL(task_status(tasks[i], "COMPLETED"), 1);
  }
  CAF_REQUIRE(!out.completions[3]);
  CAF_CHECK(nf::code_of(out.completions[3].error()) == nf::errc::invalid);
  CAF_CHECK_EQUAL(task_status(tasks[3], "IN_PROGRESS") + task_status(tasks[3], "SCHEDULED"), 1);
  NF_CHECK_OK(out.starts.at(0));
  CAF_CHECK_EQUAL(tasks_of(in.starts[0].id->str(), "a"), 1);
}

CAF_TEST(only data errors split a batch) {
  CAF_CHECK(engine::one_request_may_fail(
    nf::make_error(nf::errc::internal, "index row size exceeds maximum", "54000")));
  CAF_CHECK(engine::one_request_may_fail(
    nf::make_error(nf::errc::invalid, "invalid byte sequence", "22021")));
  CAF_CHECK(engine::one_request_may_fail(nf::make_error(nf::errc::conflict, "dup", "23505")));
  CAF_CHECK(!engine::one_request_may_fail(nf::make_error(nf::errc::internal, "bug", "42703")));
  CAF_CHECK(!engine::one_request_may_fail(nf::make_error(nf::errc::unavailable, "down")));
  CAF_CHECK(!engine::one_request_may_fail(nf::make_error(nf::errc::in_doubt, "lost", "08006")));
}

CAF_TEST_FIXTURE_SCOPE_END()
