// The lessor's own rules, on CAF's deterministic scheduler with a fake in place of its
// database (lessor/lease_store.hpp): polls that arrive together share one lease
// transaction; a poll that finds nothing is parked until work arrives (a hint, the
// periodic retry, a committer that leases to it) or its timeout; a parked poll is
// offered to the node's committers and comes back when one hands it back. Time moves
// only when a test moves the actor clock.
#define CAF_SUITE actors.lessor_parking
#include "tests/support/deterministic.hpp"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "engine/decide/batch.hpp"
#include "actors/decider/committer.hpp"
#include "actors/lessor/lease_store.hpp"
#include "actors/lessor/leased_task_message.hpp"
#include "actors/lessor/lessor.hpp"
#include "engine/lease/waiting_polls.hpp"
#include "proto/type_ids.hpp"
#include "proto/errors.hpp"

using namespace nf;
using namespace nf::actors;
using namespace std::chrono_literals;

namespace {

std::string uuid(int n) {
  auto s = std::to_string(n);
  return "00000000-0000-7000-8000-" + std::string(12 - s.size(), '0') + s;
}

store::leased_task task(const std::string& queue, int n) {
  store::leased_task t;
  t.queue = queue;
  t.task = task_id{uuid(n)};
  t.workflow = workflow_id{uuid(1000 + n)};
  t.token = lease_token{uuid(2000 + n)};
  return t;
}

/// The database the fake stands for: runnable tasks per queue, and each lease
/// transaction it was asked for (the queues of its requests, in order).
struct database {
  std::map<std::string, std::deque<store::leased_task>> ready;
  std::map<std::string, store::queue_policy> policies;  ///< absent: no definition
  std::vector<std::vector<std::string>> transactions;
};

class fake_lease_store : public lease_store {
public:
  explicit fake_lease_store(std::shared_ptr<database> db) : db_(std::move(db)) {}

  caf::expected<store::queue_policy> queue_policy(const namespace_id&,
                                                  const std::string& queue) override {
    auto it = db_->policies.find(queue);
    if (it == db_->policies.end())
      return nf::make_error(nf::errc::not_found, "no task definition");
    return it->second;
  }

  caf::expected<std::vector<std::vector<store::leased_task>>>
  lease(const std::vector<store::lease_request>& reqs, std::vector<store::lease_facts>*) override {
    std::vector<std::string> queues;
    std::vector<std::vector<store::leased_task>> out;
    for (const auto& r : reqs) {
      queues.push_back(r.queue);
      auto& ready = db_->ready[r.queue];
      std::vector<store::leased_task> got;
      while (!ready.empty() && static_cast<int>(got.size()) < r.max_tasks) {
        got.push_back(ready.front());
        ready.pop_front();
      }
      out.push_back(std::move(got));
    }
    db_->transactions.push_back(std::move(queues));
    return out;
  }

private:
  std::shared_ptr<database> db_;
};

/// A poll's answer: the ids of the tasks it was given, or an error.
struct answer {
  std::vector<std::string> tasks;
  std::string error;
};

/// A committer's batches, lending what it decides to the parked polls of queue "q"
/// (as decider_core does with the tasks it queues).
class lending_batches : public engine::decide_batches {
public:
  lending_batches(std::shared_ptr<engine::waiting_polls> waiting, std::shared_ptr<int> next_task)
    : waiting_(std::move(waiting)), next_task_(std::move(next_task)) {}

  engine::batch_output run(const engine::batch_input&) override {
    engine::batch_output out;
    for (auto& p : waiting_->lend("q", 1))
      out.lent.push_back(engine::lent_poll{std::move(p), {task("q", (*next_task_)++)}, {}});
    return out;
  }
  void serve(std::set<int16_t> shards) override { shards_ = std::move(shards); }
  const std::set<int16_t>& shards() const override { return shards_; }

private:
  std::shared_ptr<engine::waiting_polls> waiting_;
  std::shared_ptr<int> next_task_;
  std::set<int16_t> shards_;
};

struct fixture : nf::test::deterministic_fixture {
  ~fixture() override { stop_spawned(); }

  std::shared_ptr<database> db = std::make_shared<database>();
  std::shared_ptr<std::map<std::string, answer>> answers =
    std::make_shared<std::map<std::string, answer>>();
  std::shared_ptr<engine::waiting_polls> waiting;
  caf::actor lessor;


  caf::actor keep(caf::actor a) {
    spawned.push_back(a);
    return a;
  }

  /// The lessor under test; no periodic retry unless a test sets one.
  void start_lessor(std::vector<std::pair<std::string, std::string>> overrides = {}) {
    partition_context ctx;
    ctx.shard = 0;
    ctx.partition_count = 1;
    ctx.waiting = waiting;
    CAF_REQUIRE(!ctx.settings.set("lessor.poll_interval_ms", "3600000", "test"));
    for (const auto& [k, v] : overrides)
      CAF_REQUIRE(!ctx.settings.set(k, v, "test"));
    auto d = db;
    lessor = keep(spawn_lessor(
      sys, ctx, [d] { return std::make_unique<fake_lease_store>(d); }, false));
    drain();
  }

  /// Polls, sent together by one worker (they reach the lessor's mailbox before it
  /// runs): (name of the poll, queue, timeout_ms, max_tasks).
  struct poll_spec {
    std::string name;
    std::string queue;
    int64_t timeout_ms = 60000;
    int32_t max_tasks = 1;
  };
  void poll(std::vector<poll_spec> polls) {
    auto got = answers;
    auto l = lessor;
    keep(sys.spawn([=](caf::event_based_actor* w) -> caf::behavior {
      for (const auto& p : polls) {
        msg::poll_request r;
        r.queue = p.queue;
        r.worker_id = "worker-" + p.name;
        r.timeout_ms = p.timeout_ms;
        r.max_tasks = p.max_tasks;
        auto name = p.name;
        w->request(l, caf::infinite, poll_atom_v, r)
          .then(
            [got, name](std::vector<msg::leased_task>& ts) {
              auto& a = (*got)[name];
              for (const auto& t : ts)
                a.tasks.push_back(t.task_id);
            },
            [got, name](caf::error& e) { (*got)[name].error = to_string(e); });
      }
      return {[](int) {}};
    }));
  }
  void poll(const std::string& name, const std::string& queue, int64_t timeout_ms = 60000) {
    poll({{name, queue, timeout_ms, 1}});
  }

  bool answered(const std::string& name) const { return answers->count(name) != 0; }
  std::vector<std::string> tasks_of(const std::string& name) const {
    auto it = answers->find(name);
    return it == answers->end() ? std::vector<std::string>{} : it->second.tasks;
  }
  size_t transactions() const { return db->transactions.size(); }

  /// The id the lessor gave its only parked poll offered on `queue` (lent to the test).
  int64_t lend_one(const std::string& queue) {
    auto lent = waiting->lend(queue, 1);
    CAF_REQUIRE_EQUAL(lent.size(), 1u);
    CAF_CHECK_EQUAL(lent[0].lessor, lessor);
    return lent[0].poll;
  }
};

using strings = std::vector<std::string>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(lessor_parking_tests, fixture)

CAF_TEST(a poll that finds nothing is parked until its timeout then answered empty) {
  start_lessor();
  poll("a", "q", 5000);
  drain();
  CAF_CHECK_EQUAL(transactions(), 1u);
  CAF_CHECK(!answered("a"));
  advance(4999ms);
  CAF_CHECK(!answered("a"));
  advance(1ms);
  CAF_REQUIRE(answered("a"));
  CAF_CHECK(tasks_of("a").empty());
  CAF_CHECK(answers->at("a").error.empty());
  CAF_CHECK_EQUAL(transactions(), 1u);
}

CAF_TEST(a poll with timeout 0 is answered at once and lessor.max_poll_timeout_ms caps a wait) {
  start_lessor({{"lessor.max_poll_timeout_ms", "2000"}});
  poll("now", "q", 0);
  poll("long", "r", 600000);
  drain();
  CAF_REQUIRE(answered("now"));
  CAF_CHECK(tasks_of("now").empty());
  CAF_CHECK(!answered("long"));
  advance(2000ms);
  CAF_CHECK(answered("long"));
}

CAF_TEST(polls that arrive before a flush share one lease transaction) {
  start_lessor();
  db->ready["q1"] = {task("q1", 1)};
  poll({{"a", "q1"}, {"b", "q2"}, {"c", "q3"}});
  drain();
  CAF_REQUIRE_EQUAL(transactions(), 1u);
  CAF_CHECK_EQUAL(db->transactions[0], (strings{"q1", "q2", "q3"}));
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(1)}));
  CAF_CHECK(!answered("b"));
  CAF_CHECK(!answered("c"));
  // One that arrives later has a transaction of its own.
  poll("d", "q4");
  drain();
  CAF_REQUIRE_EQUAL(transactions(), 2u);
  CAF_CHECK_EQUAL(db->transactions[1], (strings{"q4"}));
}

CAF_TEST(lessor.max_batch cuts a transaction and the rest follows at once) {
  start_lessor({{"lessor.max_batch", "4"}});
  poll({{"a", "q1", 60000, 3}, {"b", "q2", 60000, 3}, {"c", "q3", 60000, 1}});
  drain();
  CAF_REQUIRE_EQUAL(transactions(), 2u);
  CAF_CHECK_EQUAL(db->transactions[0], (strings{"q1"}));
  CAF_CHECK_EQUAL(db->transactions[1], (strings{"q2", "q3"}));
}

CAF_TEST(a work hint wakes one parked poll and a full batch the next) {
  start_lessor();
  poll("a", "q");
  drain();
  CAF_CHECK_EQUAL(transactions(), 1u);
  // The queue came up dry: the next poll parks without a transaction.
  poll("b", "q");
  drain();
  CAF_CHECK_EQUAL(transactions(), 1u);
  CAF_CHECK(!answered("a"));
  CAF_CHECK(!answered("b"));
  db->ready["q"] = {task("q", 1), task("q", 2)};
  caf::anon_send(lessor, work_atom_v, std::string{"q"});
  drain();
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(1)}));
  CAF_CHECK_EQUAL(tasks_of("b"), (strings{uuid(2)}));
  // One transaction each: the hint woke a, whose full batch woke b.
  CAF_CHECK_EQUAL(transactions(), 3u);
}

CAF_TEST(a hint for another queue wakes nothing) {
  start_lessor();
  poll("a", "q");
  drain();
  db->ready["q"] = {task("q", 1)};
  caf::anon_send(lessor, work_atom_v, std::string{"other"});
  drain();
  CAF_CHECK(!answered("a"));
  CAF_CHECK_EQUAL(transactions(), 1u);
}

CAF_TEST(parked polls are retried every lessor.poll_interval_ms without a hint) {
  start_lessor({{"lessor.poll_interval_ms", "1000"}, {"poll.idle_max_ms", "1000"}});
  poll("a", "q");
  drain();
  CAF_CHECK_EQUAL(transactions(), 1u);
  db->ready["q"] = {task("q", 1)};
  advance(999ms);
  CAF_CHECK(!answered("a"));
  CAF_CHECK_EQUAL(transactions(), 1u);
  advance(1ms);
  CAF_CHECK_EQUAL(transactions(), 2u);
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(1)}));
}

CAF_TEST(retries that find nothing back off to poll.idle_max_ms and work brings them back) {
  start_lessor({{"lessor.poll_interval_ms", "1000"}, {"poll.idle_max_ms", "4000"}});
  poll("a", "q");
  drain();
  CAF_CHECK_EQUAL(transactions(), 1u);
  // The tick at start found nothing: 2 s, then 4 s, then 4 s (the cap).
  advance(2000ms);
  CAF_CHECK_EQUAL(transactions(), 2u);
  advance(3999ms);
  CAF_CHECK_EQUAL(transactions(), 2u);
  advance(1ms);
  CAF_CHECK_EQUAL(transactions(), 3u);
  advance(4000ms);
  CAF_CHECK_EQUAL(transactions(), 4u);
  // A retry that leases brings the retries after the one already set back to
  // lessor.poll_interval_ms.
  db->ready["q"] = {task("q", 1)};
  advance(4000ms);
  CAF_CHECK_EQUAL(transactions(), 5u);
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(1)}));
  poll("b", "q");
  drain();
  CAF_CHECK_EQUAL(transactions(), 6u);
  db->ready["q"] = {task("q", 2)};
  advance(4000ms);
  CAF_CHECK_EQUAL(transactions(), 7u);
  CAF_CHECK_EQUAL(tasks_of("b"), (strings{uuid(2)}));
  poll("c", "q");
  drain();
  CAF_CHECK_EQUAL(transactions(), 8u);
  db->ready["q"] = {task("q", 3)};
  advance(1000ms);
  CAF_CHECK_EQUAL(transactions(), 9u);
  CAF_CHECK_EQUAL(tasks_of("c"), (strings{uuid(3)}));
}

CAF_TEST(a parked poll is offered to the committers and answered with what one leased it) {
  waiting = std::make_shared<engine::waiting_polls>();
  start_lessor();
  poll("a", "q", 5000);
  drain();
  CAF_CHECK_EQUAL(waiting->offered().at("q"), 1u);
  auto id = lend_one("q");
  CAF_CHECK(waiting->offered().empty());
  // Lent: its timeout passes without an answer, as the committer owns it now.
  advance(6000ms);
  CAF_CHECK(!answered("a"));
  std::vector<msg::leased_task> leased{to_message(task("q", 7))};
  caf::anon_send(lessor, lent_atom_v, id, leased);
  drain();
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(7)}));
  CAF_CHECK_EQUAL(transactions(), 1u);
}

CAF_TEST(a poll handed back with nothing is retried like any poll) {
  waiting = std::make_shared<engine::waiting_polls>();
  start_lessor();
  poll("a", "q", 5000);
  drain();
  auto id = lend_one("q");
  db->ready["q"] = {task("q", 3)};
  caf::anon_send(lessor, lent_atom_v, id, std::vector<msg::leased_task>{});
  drain();
  CAF_CHECK_EQUAL(transactions(), 2u);
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(3)}));
}

CAF_TEST(a poll handed back empty after its timeout is answered empty) {
  waiting = std::make_shared<engine::waiting_polls>();
  start_lessor();
  poll("a", "q", 5000);
  drain();
  auto id = lend_one("q");
  advance(5000ms);
  CAF_CHECK(!answered("a"));
  caf::anon_send(lessor, lent_atom_v, id, std::vector<msg::leased_task>{});
  drain();
  CAF_REQUIRE(answered("a"));
  CAF_CHECK(tasks_of("a").empty());
}

CAF_TEST(the lessor takes an offered poll back before it acts on it) {
  waiting = std::make_shared<engine::waiting_polls>();
  start_lessor();
  poll("a", "q", 5000);
  drain();
  CAF_CHECK_EQUAL(waiting->offered().at("q"), 1u);
  db->ready["q"] = {task("q", 4)};
  caf::anon_send(lessor, work_atom_v, std::string{"q"});
  drain();
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(4)}));
  CAF_CHECK(waiting->offered().empty());
  // At its timeout an offered poll is taken back too, and answered.
  poll("b", "q", 5000);
  drain();
  CAF_CHECK_EQUAL(waiting->offered().at("q"), 1u);
  advance(5000ms);
  CAF_CHECK(answered("b"));
  CAF_CHECK(waiting->offered().empty());
}

CAF_TEST(a queue with a concurrency limit keeps its polls to the lessor) {
  waiting = std::make_shared<engine::waiting_polls>();
  store::queue_policy limited;
  limited.concurrency_limit = 2;
  db->policies["q"] = limited;
  start_lessor();
  poll("a", "q", 5000);
  drain();
  CAF_CHECK(!answered("a"));
  CAF_CHECK(waiting->offered().empty());
}

CAF_TEST(a committer that leases to a parked poll hands it back answered) {
  waiting = std::make_shared<engine::waiting_polls>();
  start_lessor();
  poll("a", "q");
  drain();
  CAF_REQUIRE_EQUAL(waiting->offered().at("q"), 1u);
  committer_context c;
  c.partition_count = 1;
  c.detached = false;
  c.waiting = waiting;
  CAF_REQUIRE(!c.settings.set("decider.poll_interval_ms", "3600000", "test"));
  auto w = waiting;
  auto next = std::make_shared<int>(40);
  c.batches = [w, next](const committer_context&) {
    return std::make_unique<lending_batches>(w, next);
  };
  auto committer = keep(spawn_decide_committer(sys, c));
  drain();
  caf::anon_send(committer, decide_atom_v);
  drain();
  CAF_CHECK_EQUAL(tasks_of("a"), (strings{uuid(40)}));
  CAF_CHECK(waiting->offered().empty());
  CAF_CHECK_EQUAL(transactions(), 1u);
}

CAF_TEST_FIXTURE_SCOPE_END()
