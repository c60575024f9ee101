#define CAF_SUITE net.poll_notes
#include "caf/test/unit_test.hpp"

// What the api notes of the polls it takes between two writes of the poll data: the latest
// per key, the first note of an interval told apart (it schedules the write), and a cap.

#include "net/api/poll_notes.hpp"

using namespace nf;
using namespace std::chrono_literals;

CAF_TEST(each key keeps its latest poll and the first note of an interval is told apart) {
  net::poll_notes notes;
  auto t0 = net::poll_notes::clock::now();
  CAF_CHECK(notes.note("ns", "charge", "", "w1", t0));
  CAF_CHECK(!notes.note("ns", "charge", "", "w1", t0 + 300ms));
  CAF_CHECK(!notes.note("ns", "charge", "", "w1", t0 + 100ms)); // late arrival: not newer
  CAF_CHECK(!notes.note("ns", "charge", "eu", "w1", t0 + 200ms));
  auto seen = notes.take(t0 + 1000ms);
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  CAF_CHECK_EQUAL(seen[0].domain, "");
  CAF_CHECK_EQUAL(seen[0].age_ms, 700);
  CAF_CHECK_EQUAL(seen[1].domain, "eu");
  CAF_CHECK_EQUAL(seen[1].age_ms, 800);
  CAF_CHECK_EQUAL(notes.size(), 0u);
  // The next interval's first note schedules the next write.
  CAF_CHECK(notes.note("ns", "charge", "", "w1", t0 + 2s));
}

CAF_TEST(new keys beyond the cap are dropped until the next write) {
  net::poll_notes notes{2};
  auto t0 = net::poll_notes::clock::now();
  notes.note("ns", "a", "", "w", t0);
  notes.note("ns", "b", "", "w", t0);
  notes.note("ns", "c", "", "w", t0);
  notes.note("ns", "a", "", "w", t0 + 1s); // a known key is still updated
  CAF_CHECK_EQUAL(notes.size(), 2u);
  CAF_CHECK_EQUAL(notes.dropped(), 1u);
  auto seen = notes.take(t0 + 1s);
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  CAF_CHECK_EQUAL(seen[0].task_type, "a");
  CAF_CHECK_EQUAL(seen[0].age_ms, 0);
  CAF_CHECK_EQUAL(notes.dropped(), 0u);
}
