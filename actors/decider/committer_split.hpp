#pragma once

// How a node's decide committers share its partitions (docs/engine.md §1). Each
// committer is one Postgres backend busy at a time, so under load two of them decide
// more than one. At moderate rates they only make more, smaller transactions, which cost
// more Postgres CPU and latency than one committer's larger ones (docs/perf/). So one
// committer decides for every partition until a flush carries split_at requests; then
// partition p goes to committer p mod N, until no committer's flush has carried a quarter
// of that for `hold`.
//
// The nodes of a cluster share one Postgres, whose cores the deciding backends of every node
// compete for: with K nodes deciding, a node splits over ceil(N / K) committers only, so the
// cluster keeps about as many deciding backends as one node alone would (docs/perf/).
//
// The committers and the partitions' deciders of one node share an instance; a switch
// takes effect at each committer's next flush. For a moment two committers may then
// decide the same shard, as two nodes do while a partition moves: the compare-and-set
// (I4) makes one of them stale, and correctness never depends on it (I9).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace nf::actors {

class committer_split {
public:
  using clock = std::chrono::steady_clock;

  /// `split_at` 0: always split (partition p → committer p mod N).
  committer_split(size_t committers, int64_t split_at,
                  clock::duration hold = std::chrono::seconds{1});

  /// The committer that decides for `shard` now.
  size_t committer_of(int16_t shard) const;

  /// Whether committer `index` decides for `shard` now (claims and fast paths).
  bool decides(size_t index, int16_t shard) const { return committer_of(shard) == index; }

  /// Called by each committer after a flush that carried `requests`.
  void note_flush(size_t requests, clock::time_point now = clock::now());

  bool split() const { return split_.load(std::memory_order_relaxed); }

  /// How many committers decide now: those in use while split, else one.
  size_t deciding() const { return split() ? in_use() : 1; }

  /// The nodes of the cluster that decide (this one included), as membership last said.
  void cluster_nodes(size_t nodes) { nodes_.store(nodes == 0 ? 1 : nodes, std::memory_order_relaxed); }

  /// The committers a split spreads partitions over: ceil(N / nodes).
  size_t in_use() const {
    auto nodes = nodes_.load(std::memory_order_relaxed);
    return (committers_ + nodes - 1) / nodes;
  }

  /// How long a busy committer waits to group a transaction, given one node's wait: K times
  /// as long with K nodes deciding, since each of them receives a K-th of the requests one
  /// node alone would, and a transaction should carry as many (docs/engine.md §3).
  template <class Duration>
  Duration group_wait(Duration one_node) const {
    return one_node * static_cast<typename Duration::rep>(nodes_.load(std::memory_order_relaxed));
  }

private:
  size_t committers_;
  int64_t split_at_;
  clock::duration hold_;
  std::atomic<bool> split_;
  std::atomic<size_t> nodes_{1};
  std::atomic<int64_t> last_busy_ns_{0};  ///< the last flush that kept the split
};

} // namespace nf::actors
