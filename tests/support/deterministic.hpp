#pragma once

// CAF's deterministic test scheduler for actor suites that run without a database: include
// this after `#define CAF_SUITE …` instead of caf/test/dsl.hpp. Time moves only when a test
// advances the actor clock (sched.clock().advance_time).

// 0.17.6's dsl.hpp uses FAIL without defining it.
#define FAIL(msg) CAF_FAIL(msg)
#include "caf/test/dsl.hpp"

#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system_config.hpp>

#include "proto/type_ids.hpp"

namespace nf::test {

/// test_coordinator_fixture does not load nodeflow's type-id block by itself.
struct deterministic_config : caf::actor_system_config {
  deterministic_config() { load<caf::id_block::nodeflow>(); }
};

/// The coordinator with what every such suite needs: the actors it spawned stop with the
/// fixture, and time moves only through advance().
struct deterministic_fixture : test_coordinator_fixture<deterministic_config> {
  std::vector<caf::actor> spawned;

  ~deterministic_fixture() override { stop_spawned(); }

  /// Stops what the test spawned and runs their last messages. A fixture whose actors
  /// use its own members calls this in its destructor, while those members still live.
  void stop_spawned() {
    for (auto& a : spawned)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    spawned.clear();
    drain();
  }

  /// Runs every message there is, without moving the clock.
  void drain() {
    while (sched.try_run_once()) {
    }
  }

  /// Moves the actor clock (delayed messages come due), then runs what that started.
  void advance(caf::timespan t) {
    sched.clock().advance_time(t);
    drain();
  }
};

} // namespace nf::test
