#pragma once

// The polls an api took since it last wrote them to "PollData" (store/poll_data.hpp): the
// latest per namespace, task type, domain and worker. A worker polls many times a second and
// its poll data needs seconds, not milliseconds, so the api writes them once per interval
// instead of once per poll, and holds at most `cap` distinct keys between two writes.

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "proto/messages.hpp"

namespace nf::net {

class poll_notes {
public:
  using clock = std::chrono::steady_clock;

  explicit poll_notes(size_t cap = 10000) : cap_(cap) {}

  /// Notes a poll taken at `at`. True when it is the first since the last take (the caller
  /// then schedules the write); a new key beyond the cap is dropped until the next take.
  bool note(const std::string& namespace_id, const std::string& task_type,
            const std::string& domain, const std::string& worker_id, clock::time_point at);

  /// What was noted, each with its age at `now`, and forgets it.
  std::vector<msg::poll_seen> take(clock::time_point now);

  size_t size() const { return latest_.size(); }
  size_t dropped() const { return dropped_; }

private:
  using key = std::tuple<std::string, std::string, std::string, std::string>;
  size_t cap_;
  size_t dropped_ = 0;
  std::map<key, clock::time_point> latest_;
};

} // namespace nf::net
