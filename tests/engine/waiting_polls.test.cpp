#define CAF_SUITE engine.waiting_polls
#include "caf/test/unit_test.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include "engine/lease/waiting_polls.hpp"

using namespace nf::engine;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor lessor_a = sys.spawn([] { return caf::behavior{[](int) {}}; });
  caf::actor lessor_b = sys.spawn([] { return caf::behavior{[](int) {}}; });
  waiting_polls polls;

  ~fixture() {
    caf::anon_send_exit(lessor_a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(lessor_b, caf::exit_reason::user_shutdown);
  }

  void offer(const caf::actor& lessor, int64_t id, const std::string& queue, int max_tasks) {
    nf::store::lease_request r;
    r.queue = queue;
    r.max_tasks = max_tasks;
    r.worker_id = "w" + std::to_string(id);
    polls.offer(waiting_poll{lessor, id, r});
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(waiting_polls_tests, fixture)

CAF_TEST(a committer is lent the oldest polls of a queue until they cover its tasks) {
  offer(lessor_a, 1, "q", 2);
  offer(lessor_a, 2, "q", 2);
  offer(lessor_a, 3, "q", 2);
  offer(lessor_a, 4, "other", 5);
  auto got = polls.lend("q", 3);
  CAF_REQUIRE_EQUAL(got.size(), 2u);
  CAF_CHECK_EQUAL(got[0].poll, 1);
  CAF_CHECK_EQUAL(got[1].poll, 2);
  CAF_CHECK_EQUAL(got[0].request.worker_id, "w1");
  CAF_CHECK_EQUAL(polls.offered().at("q"), 1u);
  CAF_CHECK_EQUAL(polls.offered().at("other"), 1u);
  CAF_CHECK(polls.lend("none", 5).empty());
  CAF_CHECK(polls.lend("q", 0).empty());
}

CAF_TEST(a lent poll cannot be withdrawn and a withdrawn poll cannot be lent) {
  offer(lessor_a, 1, "q", 1);
  offer(lessor_a, 2, "q", 1);
  auto lent = polls.lend("q", 1);
  CAF_REQUIRE_EQUAL(lent.size(), 1u);
  CAF_CHECK(!polls.withdraw(lessor_a.id(), 1)); // the committer owns it until it hands it back
  CAF_CHECK(polls.withdraw(lessor_a.id(), 2));
  CAF_CHECK(!polls.withdraw(lessor_a.id(), 2));
  CAF_CHECK(polls.lend("q", 1).empty());
  CAF_CHECK(polls.offered().empty());
}

CAF_TEST(poll ids are per lessor and a stopping lessor takes back only its own) {
  offer(lessor_a, 1, "q", 1);
  offer(lessor_b, 1, "q", 1);
  offer(lessor_b, 2, "r", 1);
  CAF_CHECK(!polls.withdraw(lessor_a.id(), 2));
  polls.withdraw_all(lessor_b.id());
  CAF_CHECK_EQUAL(polls.offered().size(), 1u);
  auto got = polls.lend("q", 5);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].lessor.id(), lessor_a.id());
}

CAF_TEST_FIXTURE_SCOPE_END()
