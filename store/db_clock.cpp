#include "store/db_clock.hpp"

#include <atomic>

namespace nf {

namespace {

using namespace std::chrono;

std::atomic<int64_t> offset_us{0};
std::atomic<bool> measured{false};

int64_t us_of(system_clock::time_point t) {
  return duration_cast<microseconds>(t.time_since_epoch()).count();
}

} // namespace

int64_t db_clock_offset_us() {
  return offset_us.load(std::memory_order_relaxed);
}

void observe_db_clock(system_clock::time_point sent, int64_t server_us,
                      system_clock::time_point received) {
  auto lo = server_us - us_of(received); // the server read its clock no later than we heard it
  auto hi = server_us - us_of(sent);     // … and no earlier than we asked
  if (lo > hi)
    std::swap(lo, hi); // our own clock was stepped back during the round trip
  auto held = offset_us.load(std::memory_order_relaxed);
  if (measured.load(std::memory_order_relaxed) && held >= lo && held <= hi)
    return;
  offset_us.store(lo + (hi - lo) / 2, std::memory_order_relaxed);
  measured.store(true, std::memory_order_relaxed);
}

system_clock::time_point db_clock_now() {
  return system_clock::now() + microseconds{db_clock_offset_us()};
}

int64_t db_clock_now_ms() {
  return duration_cast<milliseconds>(db_clock_now().time_since_epoch()).count();
}

} // namespace nf
