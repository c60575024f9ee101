#pragma once

// A migrated database (tests/store/worker_fixture.hpp) plus an actor system in which the
// suites spawn partition actors (lessor, timer, relay) the way a partition supervisor
// does, with the test's scoped actor standing in for the node: it receives the hints.

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/after.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/partition/context.hpp"
#include "proto/type_ids.hpp"
#include "tests/store/worker_fixture.hpp"

namespace nf::test {

struct actor_test_config : caf::actor_system_config {
  actor_test_config() {
    load<caf::id_block::nodeflow>();
  }
};

struct partition_actors_fixture : worker_fixture {
  actor_test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  std::vector<caf::actor> spawned;

  explicit partition_actors_fixture(const std::string& suite) : worker_fixture(suite) {}

  ~partition_actors_fixture() {
    // The system waits for every actor before it shuts down: stop ours first.
    for (auto& a : spawned)
      self->send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& a : spawned)
      self->wait_for(a);
  }

  /// A context for partition `shard` whose node is the test's scoped actor; `overrides`
  /// are (setting, value) pairs.
  actors::partition_context context(int16_t shard,
                                    std::vector<std::pair<std::string, std::string>> overrides = {}) {
    actors::partition_context ctx;
    ctx.shard = shard;
    ctx.partition_count = 16;
    ctx.dsn = db.dsn();
    ctx.node = caf::actor_cast<caf::actor>(self);
    for (const auto& [k, v] : overrides)
      if (auto err = ctx.settings.set(k, v, "test"))
        CAF_FAIL(*err);
    return ctx;
  }

  caf::actor keep(caf::actor a) {
    spawned.push_back(a);
    return a;
  }

  /// The hints the actors sent the node (the scoped actor) so far.
  struct hint_log {
    std::vector<int16_t> decide;
    std::vector<int16_t> outbox;
    std::vector<std::string> work;
  } hints;

  /// Collects hints until `done()` holds (true) or `limit` passed (false).
  bool await_hints(const std::function<bool()>& done,
                   std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline)
        return false;
      self->receive([&](decide_atom, int16_t s) { hints.decide.push_back(s); },
                    [&](outbox_atom, int16_t s) { hints.outbox.push_back(s); },
                    [&](work_atom, const std::string& q) { hints.work.push_back(q); },
                    caf::after(std::chrono::milliseconds(20)) >> [] {});
    }
    return true;
  }

  /// The backends of this database now (a Postgres int[] literal), for await_round.
  std::string backends() {
    return scalar(R"(SELECT coalesce(array_agg(pid), '{}')::text FROM pg_stat_activity
                      WHERE datname = current_database())");
  }

  /// Waits until a backend not among `before` (from backends()) ran a query containing
  /// `fragment` and went idle: the first round a new actor starts on its own is over.
  /// (`before` matters: the connection of a stopped actor lingers for a moment.) A
  /// statement's first use prepares it in a round trip of its own, after which the backend
  /// is idle with that statement as its last query though it has not run it yet: where
  /// that matters, wait for the round's effect instead.
  void await_round(const std::string& before, const std::string& fragment) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (count(R"(SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> ALL($1::int[])
                      AND state = 'idle' AND strpos(query, $2) > 0)",
                store::params::of(before, fragment))
          > 0)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CAF_FAIL("no new actor finished a round running " << fragment);
  }

  bool decided(int16_t shard) const {
    return std::count(hints.decide.begin(), hints.decide.end(), shard) > 0;
  }
};

} // namespace nf::test
