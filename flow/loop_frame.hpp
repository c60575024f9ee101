#pragma once

// Where an execution stands inside nested DO_WHILEs, and how that becomes its
// identity (DESIGN invariant I1) without a wider key: `iteration` holds the
// innermost loop's iteration and the reference name carries the iterations of
// the loops around that one, Conductor's way ("ref__2" for a task of an inner
// loop run in the outer loop's second iteration; "ref__2__1" one level deeper).
// A task in one loop, or in none, keeps its plain reference name.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flow/types.hpp"

namespace nf::flow {

class def_index;
struct task_info;

class loop_frame {
 public:
  /// Outside every loop.
  loop_frame() = default;

  /// The frame of a loop's body in iteration `it` (1, 2, …).
  loop_frame inner(std::int32_t it) const;

  /// Iterations of the enclosing loops, outermost first (empty outside loops).
  const std::vector<std::int32_t>& path() const { return path_; }
  /// The innermost loop's iteration; 0 outside loops.
  std::int32_t iteration() const { return path_.empty() ? 0 : path_.back(); }
  /// "__i1__…" for every enclosing loop but the innermost: what refs carry.
  const std::string& suffix() const { return suffix_; }

  /// The stored reference name of the definition's task `ref` in this frame.
  std::string ref(std::string_view base) const { return std::string(base) + suffix_; }
  task_identity id(std::string_view base, std::int32_t attempt = 0) const {
    return {ref(base), iteration(), attempt};
  }

  /// The frame of the first `depth` loops of this one.
  loop_frame outer(std::size_t depth) const;

 private:
  std::vector<std::int32_t> path_;
  std::string suffix_;
};

/// A stored reference name taken apart: the definition's task and the
/// iterations of the loops around its innermost one.
struct stored_ref {
  const task_info* info = nullptr;  ///< null: not a task of the definition
  std::vector<std::int32_t> outer;
};

/// Splits "ref__2__1" back into the definition's "ref" and {2, 1}; a name the
/// definition holds as written is itself. Validation refuses reference names
/// ending in "__<number>" in a definition with nested loops, so this is
/// never ambiguous.
stored_ref split_stored_ref(std::string_view stored, const def_index& index);

/// The loop frame of an execution: `outer` then its own iteration when it runs
/// inside a loop.
loop_frame frame_of(const stored_ref& s, std::int32_t iteration);

/// Whether `ref` ends in "__" and digits: reserved when loops nest.
bool has_iteration_suffix(std::string_view ref);

/// "ref__12" taken apart: "ref" and 12; nullopt without such a suffix or past INT32_MAX.
std::optional<std::pair<std::string_view, std::int32_t>>
split_iteration_suffix(std::string_view ref);

} // namespace nf::flow
