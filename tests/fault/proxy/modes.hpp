#pragma once

// The fault a link applies, and when each chunk it forwards may leave.

#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace nf::fault {

using clock = std::chrono::steady_clock;

enum class mode_kind { pass, blackhole, reset, half_open, delay, loss, refuse };

struct mode {
  mode_kind kind = mode_kind::pass;
  int delay_ms = 0;
  int jitter_ms = 0;
  int loss_pct = 0;
};

/// Parses the words after `set NAME` (e.g. {"delay", "50", "10"}); on failure
/// `error` names the word that is wrong.
std::optional<mode> parse_mode(const std::vector<std::string>& words, std::string& error);

/// Parses a whole non-negative number, or nullopt.
std::optional<long> parse_count(const std::string& word, long max);

/// One direction's pacing: chunks leave in the order they came, so a chunk is
/// never due before the one ahead of it.
class pacing {
public:
  clock::time_point due_for(const mode& m, clock::time_point now, std::mt19937& rng);

private:
  clock::time_point last_due_{};
  int losses_in_a_row_ = 0;
};

} // namespace nf::fault
