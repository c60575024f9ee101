#pragma once

// What a node knows of the peers it relays requests to, without I/O: how many of its
// requests each holds unanswered (cluster.max_relayed_per_peer), and which failed to answer
// lately (suspect for cluster.peer_suspect_ms). Requests for the partitions of a suspect or
// full peer are done through the database on this node instead (write-through, I9): the
// tables are the truth, so a peer that cannot be reached costs a detour, not an outage.

#include <chrono>
#include <cstddef>
#include <map>
#include <string>

namespace nf::actors {

class peer_health {
public:
  using clock = std::chrono::steady_clock;

  peer_health(std::chrono::milliseconds suspect_for, size_t max_in_flight)
    : suspect_for_(suspect_for), max_in_flight_(max_in_flight) {
  }

  /// Whether a request for `address`'s partitions should go to it now.
  bool may_relay(const std::string& address, clock::time_point now) const {
    auto it = peers_.find(address);
    if (it == peers_.end())
      return true;
    return it->second.suspect_until <= now && it->second.in_flight < max_in_flight_;
  }

  void sent(const std::string& address) { ++peers_[address].in_flight; }

  /// A relayed request ended: answered (the peer is well again) or not.
  void ended(const std::string& address, bool answered, clock::time_point now) {
    auto& p = peers_[address];
    if (p.in_flight > 0)
      --p.in_flight;
    if (answered)
      p.suspect_until = {};
    else
      p.suspect_until = now + suspect_for_;
    if (p.in_flight == 0 && p.suspect_until <= now)
      peers_.erase(address);
  }

  bool suspect(const std::string& address, clock::time_point now) const {
    auto it = peers_.find(address);
    return it != peers_.end() && it->second.suspect_until > now;
  }

private:
  struct peer {
    size_t in_flight = 0;
    clock::time_point suspect_until{};
  };
  std::chrono::milliseconds suspect_for_;
  size_t max_in_flight_;
  std::map<std::string, peer> peers_;
};

} // namespace nf::actors
