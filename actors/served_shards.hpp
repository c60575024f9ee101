#pragma once

// The shards a node-wide actor (the decide committer, the outbox relay) serves:
// one per partition actor that joined, for as long as that actor lives. The
// owner monitors each joiner and calls leave() from its down handler, so a
// partition that moved to another node stops being claimed here.

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/actor_cast.hpp>

#include "store/ids.hpp"

namespace nf::actors {

class served_shards {
public:
  void join(const caf::actor_addr& who, int16_t shard) { by_actor_[who] = shard; }

  /// Serves `shard` for the sender of `self`'s current message until that sender
  /// goes down (`self` monitors it); false when the sender is unknown.
  template <class Actor>
  bool join_sender(Actor* self, int16_t shard) {
    auto who = caf::actor_cast<caf::actor>(self->current_sender());
    if (!who)
      return false;
    self->monitor(who);
    join(who.address(), shard);
    return true;
  }
  void leave(const caf::actor_addr& who) { by_actor_.erase(who); }

  std::set<int16_t> shards() const {
    std::set<int16_t> out;
    for (const auto& [who, shard] : by_actor_)
      out.insert(shard);
    return out;
  }

  /// The served shards in ascending order, as the store's claims take them.
  std::vector<shard_id> ids() const {
    std::vector<shard_id> out;
    for (auto s : shards())
      out.push_back(shard_id{s});
    return out;
  }

  bool empty() const { return by_actor_.empty(); }

private:
  std::map<caf::actor_addr, int16_t> by_actor_;
};

} // namespace nf::actors
