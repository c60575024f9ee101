#define CAF_SUITE actors.committer_split
#include "caf/test/unit_test.hpp"

#include "actors/decider/committer_split.hpp"

using namespace nf::actors;
using namespace std::chrono_literals;

namespace {

const auto t0 = committer_split::clock::time_point{} + 1h;

} // namespace

CAF_TEST(one committer decides for every shard until a flush carries split_at requests) {
  committer_split s{2, 64, 1s};
  CAF_CHECK(!s.split());
  for (int16_t shard = 0; shard < 16; ++shard)
    CAF_CHECK_EQUAL(s.committer_of(shard), 0u);
  s.note_flush(63, t0);
  CAF_CHECK(!s.split());
  CAF_CHECK_EQUAL(s.deciding(), 1u);
  s.note_flush(64, t0);
  CAF_CHECK(s.split());
  CAF_CHECK_EQUAL(s.deciding(), 2u);
  CAF_CHECK_EQUAL(s.committer_of(4), 0u);
  CAF_CHECK_EQUAL(s.committer_of(5), 1u);
  CAF_CHECK(s.decides(1, 5));
  CAF_CHECK(!s.decides(0, 5));
}

CAF_TEST(the split holds while flushes carry a quarter of split_at and ends after the hold) {
  committer_split s{2, 64, 1s};
  s.note_flush(100, t0);
  // Small flushes inside the hold, and a quarter-size one that renews it.
  s.note_flush(3, t0 + 500ms);
  CAF_CHECK(s.split());
  s.note_flush(16, t0 + 900ms);
  s.note_flush(3, t0 + 1800ms);
  CAF_CHECK(s.split());
  s.note_flush(15, t0 + 1950ms);
  CAF_CHECK(!s.split());
  CAF_CHECK_EQUAL(s.committer_of(5), 0u);
}

CAF_TEST(split_at 0 always splits and one committer never does) {
  committer_split always{3, 0};
  CAF_CHECK(always.split());
  always.note_flush(0, t0 + 1h);
  CAF_CHECK(always.split());
  CAF_CHECK_EQUAL(always.committer_of(5), 2u);
  committer_split one{1, 64};
  one.note_flush(1000, t0);
  CAF_CHECK(!one.split());
  CAF_CHECK_EQUAL(one.committer_of(5), 0u);
}

CAF_TEST(with more nodes deciding a split spreads over ceil(N / nodes) committers) {
  committer_split s{4, 64, 1s};
  s.note_flush(100, t0);
  CAF_CHECK_EQUAL(s.deciding(), 4u);
  CAF_CHECK_EQUAL(s.committer_of(7), 3u);
  s.cluster_nodes(3); // ceil(4 / 3) = 2
  CAF_CHECK_EQUAL(s.deciding(), 2u);
  CAF_CHECK_EQUAL(s.committer_of(7), 1u);
  CAF_CHECK_EQUAL(s.committer_of(6), 0u);
  s.cluster_nodes(4); // one each: the node decides on one backend however busy
  CAF_CHECK_EQUAL(s.deciding(), 1u);
  CAF_CHECK_EQUAL(s.committer_of(7), 0u);
  s.cluster_nodes(1);
  CAF_CHECK_EQUAL(s.committer_of(7), 3u);
}
