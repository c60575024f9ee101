// The decide committer's own rules, on CAF's deterministic scheduler with a fake in
// place of decider_core (decider/decide_batches.hpp): which requests share a flush,
// the bounds on one flush, when it flushes (at once, after decider.group_commit_us
// when busy, again at once when work is left, every decider.poll_interval_ms), and
// which shards each of a node's committers decides. Time moves only when a test moves
// the actor clock.
#define CAF_SUITE actors.committer
#include "tests/support/deterministic.hpp"

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "engine/decide/batch.hpp"
#include "actors/decider/committer.hpp"
#include "actors/decider/committer_split.hpp"
#include "proto/type_ids.hpp"
#include "proto/errors.hpp"

using namespace nf;
using namespace nf::actors;
using namespace std::chrono_literals;

namespace {

/// One flush as the fake saw it.
struct seen_batch {
  size_t starts = 0;
  size_t completions = 0;
  size_t commands = 0;
  std::set<int16_t> shards;  ///< what the committer served for this flush
};

/// What the fakes of one test share with it.
struct script {
  std::vector<seen_batch> batches;
  std::deque<bool> more;               ///< `more` of the next flushes (then false)
  std::optional<int64_t> timer_ms;     ///< earliest timer each flush reports armed
};

class fake_batches : public engine::decide_batches {
public:
  explicit fake_batches(std::shared_ptr<script> s) : s_(std::move(s)) {}

  engine::batch_output run(const engine::batch_input& in) override {
    s_->batches.push_back({in.starts.size(), in.completions.size(), in.commands.size(), shards_});
    engine::batch_output out;
    for (const auto& r : in.starts)
      out.starts.push_back(store::start_result{*r.id, true, shard_id{0}});
    for (const auto& c : in.completions)
      out.completions.push_back("done " + c.task.str());
    for (const auto& c : in.commands)
      out.commands.push_back("did " + c.op);
    if (s_->timer_ms) {
      out.hints.note_timer(s_->timer_ms);
      out.hints.timer_shards.insert(0);
    }
    if (!s_->more.empty()) {
      out.more = s_->more.front();
      s_->more.pop_front();
    }
    return out;
  }
  void serve(std::set<int16_t> shards) override { shards_ = std::move(shards); }
  const std::set<int16_t>& shards() const override { return shards_; }

private:
  std::shared_ptr<script> s_;
  std::set<int16_t> shards_;
};

/// What the requesters of one test were answered.
struct answers {
  size_t starts = 0;
  size_t completions = 0;
  size_t commands = 0;
  std::vector<std::string> errors;
  size_t all() const { return starts + completions + commands + errors.size(); }
};

std::string uuid(int n) {
  auto s = std::to_string(n);
  return "00000000-0000-7000-8000-" + std::string(12 - s.size(), '0') + s;
}

struct fixture : nf::test::deterministic_fixture {
  ~fixture() override { stop_spawned(); }

  std::shared_ptr<script> seen = std::make_shared<script>();
  std::shared_ptr<answers> got = std::make_shared<answers>();
  int armed_hints = 0;

  caf::actor committer(std::vector<std::pair<std::string, std::string>> overrides = {},
                       std::shared_ptr<committer_split> split = nullptr, size_t index = 0) {
    committer_context c;
    c.partition_count = 4;
    c.split = std::move(split);
    c.index = index;
    c.detached = false;
    auto s = seen;
    c.batches = [s](const committer_context&) { return std::make_unique<fake_batches>(s); };
    c.wall_clock = [] { return std::chrono::system_clock::time_point{} + 1000h; };
    c.node = keep(sys.spawn([this](caf::event_based_actor*) -> caf::behavior {
      return {
        [this](armed_atom, int16_t, int64_t) { ++armed_hints; },
        [](work_atom, const std::string&) {},
        [](outbox_atom, int16_t) {},
        [](decide_atom, int16_t) {},
      };
    }));
    // No poll unless a test asks for one.
    CAF_REQUIRE(!c.settings.set("decider.poll_interval_ms", "3600000", "test"));
    for (const auto& [k, v] : overrides)
      CAF_REQUIRE(!c.settings.set(k, v, "test"));
    auto a = keep(spawn_decide_committer(sys, c));
    drain();
    return a;
  }

  caf::actor keep(caf::actor a) {
    spawned.push_back(a);
    return a;
  }

  /// A partition's decider of `shard` joining `committers` (it stays alive).
  void join(int16_t shard, std::vector<caf::actor> committers) {
    keep(sys.spawn([=](caf::event_based_actor* d) -> caf::behavior {
      for (const auto& c : committers)
        d->send(c, join_atom_v, shard);
      return {[](int) {}};
    }));
  }

  /// One requester sending `n` starts at once (they reach the committer's mailbox
  /// together, before it runs).
  void starts(const caf::actor& c, size_t n, int16_t shard = 0) {
    auto g = got;
    keep(sys.spawn([=](caf::event_based_actor* r) -> caf::behavior {
      for (size_t i = 0; i < n; ++i) {
        msg::start_request m;
        m.workflow_name = "w";
        r->request(c, caf::infinite, start_atom_v, shard, m)
          .then([g](msg::start_reply&) { ++g->starts; },
                [g](caf::error& e) { g->errors.push_back(to_string(e)); });
      }
      return {[](int) {}};
    }));
  }

  /// Completions of tasks `first` … `first + n - 1`.
  void completions(const caf::actor& c, int first, size_t n) {
    auto g = got;
    keep(sys.spawn([=](caf::event_based_actor* r) -> caf::behavior {
      for (size_t i = 0; i < n; ++i) {
        msg::task_result m;
        m.task_id = uuid(first + static_cast<int>(i));
        m.workflow_id = uuid(1);
        m.lease_token = uuid(2);
        r->request(c, caf::infinite, complete_atom_v, m)
          .then([g](std::string&) { ++g->completions; },
                [g](caf::error& e) { g->errors.push_back(to_string(e)); });
      }
      return {[](int) {}};
    }));
  }

  void commands(const caf::actor& c, size_t n) {
    auto g = got;
    keep(sys.spawn([=](caf::event_based_actor* r) -> caf::behavior {
      for (size_t i = 0; i < n; ++i) {
        msg::workflow_command m;
        m.op = "pause";
        m.workflow_id = uuid(static_cast<int>(i) + 1);
        r->request(c, caf::infinite, command_atom_v, m)
          .then([g](std::string&) { ++g->commands; },
                [g](caf::error& e) { g->errors.push_back(to_string(e)); });
      }
      return {[](int) {}};
    }));
  }

  std::vector<size_t> batch_sizes() const {
    std::vector<size_t> out;
    for (const auto& b : seen->batches)
      out.push_back(b.starts + b.completions + b.commands);
    return out;
  }
};

using sizes = std::vector<size_t>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(committer_tests, fixture)

CAF_TEST(requests that arrive before a flush share one transaction) {
  auto c = committer();
  starts(c, 3);
  completions(c, 100, 2);
  commands(c, 1);
  drain();
  CAF_REQUIRE_EQUAL(seen->batches.size(), 1u);
  CAF_CHECK_EQUAL(seen->batches[0].starts, 3u);
  CAF_CHECK_EQUAL(seen->batches[0].completions, 2u);
  CAF_CHECK_EQUAL(seen->batches[0].commands, 1u);
  CAF_CHECK_EQUAL(got->starts, 3u);
  CAF_CHECK_EQUAL(got->completions, 2u);
  CAF_CHECK_EQUAL(got->commands, 1u);
  CAF_CHECK(got->errors.empty());
  // One that arrives after it has a flush of its own.
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{6, 1}));
  CAF_CHECK_EQUAL(got->starts, 4u);
}

CAF_TEST(a rejected request is answered at once and flushes nothing) {
  auto c = committer();
  auto g = got;
  keep(sys.spawn([=](caf::event_based_actor* r) -> caf::behavior {
    msg::workflow_command m;
    m.op = "explode";
    m.workflow_id = uuid(1);
    r->request(c, caf::infinite, command_atom_v, m)
      .then([g](std::string&) { ++g->commands; },
            [g](caf::error& e) { g->errors.push_back(to_string(e)); });
    return {[](int) {}};
  }));
  drain();
  CAF_CHECK(seen->batches.empty());
  CAF_REQUIRE_EQUAL(got->errors.size(), 1u);
  CAF_CHECK_EQUAL(got->commands, 0u);
}

CAF_TEST(a burst is cut into bounded flushes) {
  // No group commit wait: the rest follows at once.
  auto c = committer({{"decider.group_commit_us", "0"}});
  starts(c, 1001);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{1000, 1}));
  seen->batches.clear();
  commands(c, 101);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{100, 1}));
  seen->batches.clear();
  completions(c, 1, store::max_completions_per_batch + 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{store::max_completions_per_batch, 1}));
  CAF_CHECK_EQUAL(got->starts, 1001u);
  CAF_CHECK_EQUAL(got->commands, 101u);
  CAF_CHECK_EQUAL(got->completions, store::max_completions_per_batch + 1);
  CAF_CHECK(got->errors.empty());
}

CAF_TEST(each kind is cut on its own and a busy committer flushes the rest after group_commit_us) {
  auto c = committer({{"decider.group_commit_us", "1000"}});
  starts(c, 1002);
  commands(c, 150);
  completions(c, 1, 3);
  drain();
  CAF_CHECK_EQUAL(seen->batches.size(), 1u);
  advance(1000us);
  CAF_REQUIRE_EQUAL(seen->batches.size(), 2u);
  CAF_CHECK_EQUAL(seen->batches[0].starts, 1000u);
  CAF_CHECK_EQUAL(seen->batches[0].commands, 100u);
  CAF_CHECK_EQUAL(seen->batches[0].completions, 3u);
  CAF_CHECK_EQUAL(seen->batches[1].starts, 2u);
  CAF_CHECK_EQUAL(seen->batches[1].commands, 50u);
  CAF_CHECK_EQUAL(seen->batches[1].completions, 0u);
}

CAF_TEST(a second report of a task waits for the next flush) {
  auto c = committer();
  completions(c, 7, 1);
  completions(c, 7, 1);
  completions(c, 8, 1);
  drain();
  CAF_REQUIRE_EQUAL(seen->batches.size(), 2u);
  CAF_CHECK_EQUAL(seen->batches[0].completions, 2u); // tasks 7 and 8
  CAF_CHECK_EQUAL(seen->batches[1].completions, 1u); // task 7 again
  CAF_CHECK_EQUAL(got->completions, 3u);
}

CAF_TEST(a busy committer waits group_commit_us before its next flush) {
  auto c = committer({{"decider.group_commit_us", "1000"},
                      {"decider.group_commit_from_requests", "2"}});
  // Not busy yet: a flush at once.
  starts(c, 2);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2}));
  // That flush carried group_commit_from requests: the next one waits, and what
  // arrives meanwhile joins it.
  starts(c, 1);
  drain();
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2}));
  advance(999us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2}));
  advance(1us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2, 2}));
  CAF_CHECK_EQUAL(got->starts, 4u);
  // Still busy; a flush of one request ends that.
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2, 2}));
  advance(1000us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2, 2, 1}));
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2, 2, 1, 1}));
}

CAF_TEST(with three nodes deciding a busy committer waits three times group_commit_us) {
  auto split = std::make_shared<committer_split>(2, 64);
  split->cluster_nodes(3);
  auto c = committer({{"decider.group_commit_us", "1000"},
                      {"decider.group_commit_from_requests", "2"}},
                     split);
  starts(c, 2);
  drain();
  starts(c, 2);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2}));
  advance(2999us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2}));
  advance(1us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2, 2}));
}

CAF_TEST(group_commit_us 0 never waits) {
  auto c = committer({{"decider.group_commit_us", "0"},
                      {"decider.group_commit_from_requests", "2"}});
  starts(c, 2);
  drain();
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{2, 1}));
}

CAF_TEST(work left in a served shard makes the next flush without a request) {
  auto c = committer();
  seen->more = {true, true, false};
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{1, 0, 0}));
  drain();
  CAF_CHECK_EQUAL(seen->batches.size(), 3u);
  // After a busy flush the next one waits group_commit_us, `more` or not.
  seen->batches.clear();
  seen->more = {true, false};
  starts(c, 8);
  drain();
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{8}));
  advance(1000us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{8, 0}));
  advance(1000us);
  CAF_CHECK_EQUAL(batch_sizes(), (sizes{8, 0}));
}

CAF_TEST(a joining partition or a decide hint makes a flush and hints before it share it) {
  auto c = committer();
  join(2, {c});
  join(3, {c});
  drain();
  CAF_REQUIRE_EQUAL(seen->batches.size(), 1u);
  CAF_CHECK_EQUAL(seen->batches[0].shards, (std::set<int16_t>{2, 3}));
  caf::anon_send(c, decide_atom_v);
  caf::anon_send(c, decide_atom_v);
  drain();
  CAF_CHECK_EQUAL(seen->batches.size(), 2u);
}

CAF_TEST(the committer polls every poll_interval_ms without any hint) {
  auto c = committer({{"decider.poll_interval_ms", "1000"}, {"poll.idle_max_ms", "1000"}});
  CAF_CHECK(seen->batches.empty());
  advance(999ms);
  CAF_CHECK(seen->batches.empty());
  advance(1ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 1u);
  advance(1000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 2u);
  // A flush of requests in between does not move the poll.
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(seen->batches.size(), 3u);
  advance(1000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 4u);
}

CAF_TEST(polls that find nothing back off to poll.idle_max_ms and a hint brings them back) {
  auto c = committer({{"decider.poll_interval_ms", "1000"}, {"poll.idle_max_ms", "4000"}});
  // Nothing found: 1 s, then 2 s, then 4 s (the cap), and 4 s again.
  advance(1000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 1u);
  advance(1999ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 1u);
  advance(1ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 2u);
  advance(4000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 3u);
  advance(4000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 4u);
  // A hint: its flush at once, and the polls after the one already set are 1 s apart again.
  anon_send(c, decide_atom_v);
  drain();
  CAF_CHECK_EQUAL(seen->batches.size(), 5u);
  advance(4000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 6u);
  advance(1000ms);
  CAF_CHECK_EQUAL(seen->batches.size(), 7u);
}

CAF_TEST(a timer is hinted only when due before the node timer polls would find it) {
  auto c = committer({{"timer.poll_interval_ms", "1000"}, {"poll.idle_max_ms", "1000"}});
  auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(1000h).count();
  seen->timer_ms = wall_ms + 2000;
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(armed_hints, 1);
  seen->timer_ms = wall_ms + 2001;
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(armed_hints, 1);
}

CAF_TEST(an idle timer may sleep poll.idle_max_ms so a timer due before two of those is hinted) {
  auto c = committer({{"timer.poll_interval_ms", "1000"}, {"poll.idle_max_ms", "8000"}});
  auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(1000h).count();
  seen->timer_ms = wall_ms + 16000;
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(armed_hints, 1);
  seen->timer_ms = wall_ms + 16001;
  starts(c, 1);
  drain();
  CAF_CHECK_EQUAL(armed_hints, 1);
}

CAF_TEST(the split gives each committer its shards from its next flush on) {
  auto split = std::make_shared<committer_split>(2, 4, 1s);
  auto c0 = committer({}, split, 0);
  auto c1 = committer({}, split, 1);
  for (int16_t s = 0; s < 4; ++s)
    join(s, {c0, c1});
  drain();
  // Not split: the first committer decides for every shard, the second for none.
  CAF_REQUIRE_EQUAL(seen->batches.size(), 2u);
  auto served = [&](size_t i) { return seen->batches[i].shards; };
  CAF_CHECK_EQUAL(served(0), (std::set<int16_t>{0, 1, 2, 3}));
  CAF_CHECK_EQUAL(served(1), (std::set<int16_t>{}));
  // A flush of split_at requests splits; each committer's next flush serves its half.
  starts(c0, 4);
  drain();
  CAF_REQUIRE_EQUAL(seen->batches.size(), 3u);
  CAF_CHECK_EQUAL(served(2), (std::set<int16_t>{0, 1, 2, 3}));
  CAF_CHECK(split->split());
  caf::anon_send(c0, decide_atom_v);
  drain();
  caf::anon_send(c1, decide_atom_v);
  drain();
  CAF_REQUIRE_EQUAL(seen->batches.size(), 5u);
  CAF_CHECK_EQUAL(served(3), (std::set<int16_t>{0, 2}));
  CAF_CHECK_EQUAL(served(4), (std::set<int16_t>{1, 3}));
  // Small flushes within the hold keep the split; after it (on the actor clock) the
  // first committer takes every shard back.
  advance(900ms);
  caf::anon_send(c1, decide_atom_v);
  drain();
  CAF_CHECK(split->split());
  advance(200ms);
  caf::anon_send(c1, decide_atom_v);
  drain();
  CAF_CHECK(!split->split());
  caf::anon_send(c0, decide_atom_v);
  drain();
  caf::anon_send(c1, decide_atom_v);
  drain();
  CAF_REQUIRE_EQUAL(seen->batches.size(), 9u);
  CAF_CHECK_EQUAL(served(7), (std::set<int16_t>{0, 1, 2, 3}));
  CAF_CHECK_EQUAL(served(8), (std::set<int16_t>{}));
}

CAF_TEST(a partition that goes down is no longer served) {
  auto c = committer();
  join(1, {c});
  drain();
  auto d = spawned.back();
  join(2, {c});
  drain();
  caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  drain();
  caf::anon_send(c, decide_atom_v);
  drain();
  CAF_REQUIRE(!seen->batches.empty());
  CAF_CHECK_EQUAL(seen->batches.back().shards, (std::set<int16_t>{2}));
}

CAF_TEST_FIXTURE_SCOPE_END()
