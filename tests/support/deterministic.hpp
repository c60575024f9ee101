#pragma once

// CAF's deterministic test scheduler for actor suites that run without a database: include
// this after `#define CAF_SUITE …` instead of caf/test/dsl.hpp. Time moves only when a test
// advances the actor clock (sched.clock().advance_time).

// 0.17.6's dsl.hpp uses FAIL without defining it.
#define FAIL(msg) CAF_FAIL(msg)
#include "caf/test/dsl.hpp"

#include <caf/actor_system_config.hpp>

#include "proto/type_ids.hpp"

namespace nf::test {

/// test_coordinator_fixture does not load nodeflow's type-id block by itself.
struct deterministic_config : caf::actor_system_config {
  deterministic_config() { load<caf::id_block::nodeflow>(); }
};

} // namespace nf::test
