#pragma once

// The shards a node-wide actor (the decide committer, the outbox relay) serves:
// one per partition actor that joined, for as long as that actor lives. The
// owner monitors each joiner and calls leave() from its down handler, so a
// partition that moved to another node stops being claimed here. A joiner names
// the epoch its partition was acquired at (store/partition_fence.hpp); a shard
// whose write was refused at that epoch is no longer served, though its actor may
// live on until the node hears from membership that the partition is gone.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/actor_cast.hpp>

#include "store/ids.hpp"
#include "store/partition_fence.hpp"

namespace nf::actors {

class served_shards {
public:
  void join(const caf::actor_addr& who, int16_t shard, int64_t epoch = 0,
            const std::string& node = {}) {
    by_actor_[who] = {shard, epoch};
    if (!node.empty())
      node_ = node_id{node};
  }

  /// Serves `shard` for the sender of `self`'s current message until that sender
  /// goes down (`self` monitors it); false when the sender is unknown.
  template <class Actor>
  bool join_sender(Actor* self, int16_t shard, int64_t epoch = 0, const std::string& node = {}) {
    auto who = caf::actor_cast<caf::actor>(self->current_sender());
    if (!who)
      return false;
    self->monitor(who);
    join(who.address(), shard, epoch, node);
    return true;
  }
  void leave(const caf::actor_addr& who) { by_actor_.erase(who); }

  /// The fence refused a write for `shard` at `epoch`: it is served no longer.
  void fenced(int16_t shard, int64_t epoch) { fenced_.insert({shard, epoch}); }

  std::set<int16_t> shards() const {
    std::set<int16_t> out;
    for (const auto& [who, s] : by_actor_)
      if (fenced_.count(s) == 0)
        out.insert(s.first);
    return out;
  }

  /// The served shards in ascending order, as the store's claims take them.
  std::vector<shard_id> ids() const {
    std::vector<shard_id> out;
    for (auto s : shards())
      out.push_back(shard_id{s});
    return out;
  }

  /// The fence of `of` (served shards): each at the epoch its joiner named (empty when
  /// the joiners named none: no membership, no fence).
  store::partition_fence fence(const std::set<int16_t>& of) const {
    store::partition_fence f;
    f.node = node_;
    for (const auto& [who, s] : by_actor_)
      if (s.second > 0 && of.count(s.first) != 0 && fenced_.count(s) == 0
          && s.second > f.epochs[s.first])
        f.epochs[s.first] = s.second;  // the newest: an old joiner may not be down yet
    return f;
  }

  /// The epoch `shard` is served at (0: none named).
  int64_t epoch_of(int16_t shard) const {
    int64_t out = 0;
    for (const auto& [who, s] : by_actor_)
      if (s.first == shard && fenced_.count(s) == 0)
        out = std::max(out, s.second);
    return out;
  }

  bool empty() const { return by_actor_.empty(); }

private:
  std::map<caf::actor_addr, std::pair<int16_t, int64_t>> by_actor_;
  std::set<std::pair<int16_t, int64_t>> fenced_;
  node_id node_;
};

} // namespace nf::actors
