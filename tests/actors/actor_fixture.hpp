#pragma once

// Shared by the actor suites: the decide-path fixture's database and SQL helpers
// (tests/store/decide_fixture.hpp), an in-process actor system with the nodeflow
// config, a probe that records the hints actors send "the node", blocking requests
// with a timeout, and waits on table state in bounded loops (never a bare
// sleep-and-hope).

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include "net/client/system_config.hpp"
#include "proto/type_ids.hpp"
#include "tests/store/decide_fixture.hpp"

namespace nf::test {

/// Hints the actors under test sent to "the node", by atom.
struct probe_log {
  std::mutex mtx;
  std::map<std::string, int> counts;
  std::vector<std::string> queues;
  std::vector<int16_t> owned;  ///< the last owned set membership reported
  std::vector<std::string> owners;  ///< the last owner map membership reported

  void add(const std::string& what) {
    std::lock_guard<std::mutex> g{mtx};
    ++counts[what];
  }
  int count(const std::string& what) {
    std::lock_guard<std::mutex> g{mtx};
    return counts[what];
  }
  size_t owned_now() {
    std::lock_guard<std::mutex> g{mtx};
    return owned.size();
  }
  std::vector<std::string> owners_now() {
    std::lock_guard<std::mutex> g{mtx};
    return owners;
  }
};

inline caf::behavior probe(caf::event_based_actor*, std::shared_ptr<probe_log> log) {
  return {
    [=](work_atom, const std::string& q) {
      log->add("work");
      std::lock_guard<std::mutex> g{log->mtx};
      log->queues.push_back(q);
    },
    [=](decide_atom, int16_t) { log->add("decide"); },
    [=](armed_atom, int16_t, int64_t) { log->add("armed"); },
    [=](outbox_atom, int16_t) { log->add("outbox"); },
    [=](partitions_atom, int16_t, int64_t, const std::string&) {},  // an owned one's epoch
    [=](partitions_atom, const std::vector<int16_t>& owned) {
      log->add("partitions");
      std::lock_guard<std::mutex> g{log->mtx};
      log->owned = owned;
    },
    [=](owners_atom, const std::vector<std::string>& owners) {
      log->add("owners");
      std::lock_guard<std::mutex> g{log->mtx};
      log->owners = owners;
    },
  };
}

/// Polls `pred` every few milliseconds until it holds or `limit` passes.
inline bool wait_until(const std::function<bool()>& pred,
                       std::chrono::milliseconds limit = std::chrono::seconds{20}) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return pred();
}

struct actor_fixture : decide_fixture {
  net::system_config cfg;
  caf::actor_system sys;
  std::shared_ptr<probe_log> hints = std::make_shared<probe_log>();
  caf::actor probe_actor;

  /// The suite's database emptied (a database of its own when `fresh`: tests of
  /// "PartitionLeases", whose rows cannot be deleted), with its partition count set
  /// to `partitions` (allowed: it is empty).
  actor_fixture(const std::string& suite, int partitions, bool fresh = false)
    : decide_fixture(fresh ? unique(suite) : suite), sys{cfg} {
    sql("UPDATE \"ClusterSettings\" SET \"partitionCount\" = $1",
        store::params::of(int64_t{partitions}));
    this->partitions = partitions;
    probe_actor = sys.spawn(probe, hints);
  }

  ~actor_fixture() {
    caf::anon_send_exit(probe_actor, caf::exit_reason::user_shutdown);
  }

  static std::string unique(const std::string& suite) {
    static std::atomic<int> n{0};
    return suite + "_" + std::to_string(n++);
  }

  void task_defs(const std::string& json) {
    auto r = store::put_task_defs_json(conn, default_namespace, json);
    if (!r)
      CAF_FAIL("task defs: " << nf::message_of(r.error()));
  }

  void workflow_def(const std::string& json) {
    auto r = store::put_workflow_def_json(conn, default_namespace, json);
    if (!r)
      CAF_FAIL("workflow def: " << nf::message_of(r.error()));
  }

  /// A blocking request with a finite timeout; the error when it fails.
  template <class T, class... Ts>
  caf::expected<T> ask(const caf::actor& dest, Ts&&... xs) {
    caf::scoped_actor self{sys};
    caf::expected<T> out{caf::error{}};
    self->request(dest, std::chrono::seconds{30}, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& err) { out = std::move(err); });
    return out;
  }

  std::string status_of(const std::string& workflow) {
    return scalar(R"(SELECT "status"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                  store::params::of(workflow));
  }

  bool wait_status(const std::string& workflow, const std::string& status) {
    return wait_until([&] { return status_of(workflow) == status; });
  }
};

} // namespace nf::test
