#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace nf::flow {

/// Milliseconds since the Unix epoch. flow/ never reads a clock: every caller
/// passes `now`, so decide() stays pure and tests can move time freely.
using time_ms = std::int64_t;

/// The identity of one task execution (DESIGN invariant I1): unique within a
/// workflow, so re-running an evaluation can never insert a duplicate.
struct task_identity {
  /// The task's `taskReferenceName`.
  std::string ref;
  /// 0 outside loops; 1, 2, … for the iterations of a DO_WHILE body.
  std::int32_t iteration = 0;
  /// 0 for the first try; a retry is `attempt + 1` (Conductor's retryCount).
  std::int32_t attempt = 0;
};

inline bool operator==(const task_identity& a, const task_identity& b) {
  return a.iteration == b.iteration && a.attempt == b.attempt && a.ref == b.ref;
}
inline bool operator!=(const task_identity& a, const task_identity& b) { return !(a == b); }
inline bool operator<(const task_identity& a, const task_identity& b) {
  return std::tie(a.ref, a.iteration, a.attempt) < std::tie(b.ref, b.iteration, b.attempt);
}

/// "ref/iteration/attempt", used in event keys and messages.
std::string to_string(const task_identity& id);

} // namespace nf::flow
