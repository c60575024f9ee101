#include "modes.hpp"

#include <algorithm>

namespace nf::fault {

std::optional<long> parse_count(const std::string& word, long max) {
  if (word.empty() || word.size() > 9 || word.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  long v = std::stol(word);
  if (v > max)
    return std::nullopt;
  return v;
}

std::optional<mode> parse_mode(const std::vector<std::string>& words, std::string& error) {
  if (words.empty()) {
    error = "set needs a mode: pass, blackhole, reset, half-open, delay MS [JITTER_MS], loss PCT "
            "or refuse";
    return std::nullopt;
  }
  const auto& name = words[0];
  auto no_more = [&](std::size_t n) {
    if (words.size() <= n)
      return true;
    error = "mode " + name + " takes no argument '" + words[n] + "'";
    return false;
  };
  mode m;
  if (name == "pass" || name == "blackhole" || name == "reset" || name == "half-open"
      || name == "refuse") {
    if (!no_more(1))
      return std::nullopt;
    m.kind = name == "pass"        ? mode_kind::pass
             : name == "blackhole" ? mode_kind::blackhole
             : name == "reset"     ? mode_kind::reset
             : name == "half-open" ? mode_kind::half_open
                                   : mode_kind::refuse;
    return m;
  }
  if (name == "delay") {
    if (words.size() < 2 || words.size() > 3) {
      error = "delay takes MS [JITTER_MS]";
      return std::nullopt;
    }
    auto ms = parse_count(words[1], 600000);
    auto jitter = words.size() == 3 ? parse_count(words[2], 600000) : std::optional<long>{0};
    if (!ms || !jitter) {
      error = "delay " + std::string{!ms ? "MS" : "JITTER_MS"} + " '" + words[!ms ? 1 : 2]
              + "' is not a whole number of milliseconds from 0 to 600000";
      return std::nullopt;
    }
    m.kind = mode_kind::delay;
    m.delay_ms = static_cast<int>(*ms);
    m.jitter_ms = static_cast<int>(*jitter);
    return m;
  }
  if (name == "loss") {
    auto pct = words.size() == 2 ? parse_count(words[1], 100) : std::nullopt;
    if (!pct) {
      error = "loss takes PCT, a whole number from 0 to 100";
      return std::nullopt;
    }
    m.kind = mode_kind::loss;
    m.loss_pct = static_cast<int>(*pct);
    return m;
  }
  error = "unknown mode '" + name
          + "' (pass, blackhole, reset, half-open, delay, loss, refuse)";
  return std::nullopt;
}

clock::time_point pacing::due_for(const mode& m, clock::time_point now, std::mt19937& rng) {
  using std::chrono::milliseconds;
  auto due = std::max(now, last_due_);
  if (m.kind == mode_kind::delay) {
    int jitter = m.jitter_ms > 0 ? std::uniform_int_distribution<int>{0, m.jitter_ms}(rng) : 0;
    due = std::max(now + milliseconds{m.delay_ms + jitter}, last_due_);
  } else if (m.kind == mode_kind::loss
             && std::uniform_int_distribution<int>{1, 100}(rng) <= m.loss_pct) {
    // A lost segment shows up when TCP retransmits it: 200 ms (Linux's minimum
    // RTO), doubling while losses follow each other, capped at 3.2 s.
    int backoff = std::min(200 << std::min(losses_in_a_row_, 4), 3200);
    ++losses_in_a_row_;
    due += milliseconds{backoff};
  } else {
    losses_in_a_row_ = 0;
  }
  last_due_ = due;
  return due;
}

} // namespace nf::fault
