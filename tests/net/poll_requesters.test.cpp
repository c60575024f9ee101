#define CAF_SUITE net.poll_requesters
#include "caf/test/unit_test.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include "net/api/poll_requesters.hpp"

using namespace nf;

namespace {

caf::behavior idle(caf::event_based_actor*) {
  return {[](int) {}};
}

} // namespace

CAF_TEST(a sender is watched from its first open poll to its last and marked when it goes) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto a = caf::actor_cast<caf::actor_addr>(sys.spawn(idle));
  auto b = caf::actor_cast<caf::actor_addr>(sys.spawn(idle));
  net::poll_requesters w;
  auto a1 = w.open(a);
  CAF_CHECK(a1.first);
  auto a2 = w.open(a);
  CAF_CHECK(!a2.first);
  CAF_CHECK(a1.gone == a2.gone);
  auto b1 = w.open(b);
  CAF_CHECK(b1.first);
  CAF_CHECK_EQUAL(w.size(), 2u);
  // b's only poll answered: no longer watched, and not gone.
  CAF_CHECK(w.close(b));
  CAF_CHECK(!*b1.gone);
  CAF_CHECK(!w.went_away(b));
  // a goes while two polls of its are open: both see it; closing them stops nothing more.
  CAF_CHECK(w.went_away(a));
  CAF_CHECK(*a1.gone);
  CAF_CHECK(*a2.gone);
  CAF_CHECK(!w.close(a));
  CAF_CHECK(!w.close(a));
  CAF_CHECK_EQUAL(w.size(), 0u);
  // A new poll of the same sender afterwards is watched afresh.
  auto a3 = w.open(a);
  CAF_CHECK(a3.first);
  CAF_CHECK(!*a3.gone);
  CAF_CHECK(w.close(a));
  for (auto* who : {&a, &b})
    caf::anon_send_exit(*who, caf::exit_reason::user_shutdown);
}
