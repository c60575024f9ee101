#pragma once

// What the decide committer (actors/decider/committer.hpp) runs its flushes through: one call per
// flush, with every request that arrived before it. decider_core (batch.hpp) is the
// real one, owning the database connection; the committer's own rules (which requests
// share a flush, when it flushes, which shards it serves) are tested against a fake.

#include <cstdint>
#include <set>

#include "store/partition_fence.hpp"

namespace nf::engine {

struct batch_input;
struct batch_output;

class decide_batches {
public:
  virtual ~decide_batches() = default;

  /// Runs one batch in one transaction. Never throws; every request gets an answer.
  virtual batch_output run(const batch_input& in) = 0;

  /// The shards whose pending evaluations the next batches claim.
  virtual void serve(std::set<int16_t> shards) = 0;
  virtual const std::set<int16_t>& shards() const = 0;
  /// The epochs the served shards are held at (store/partition_fence.hpp): a batch whose
  /// claim finds one moved on is refused and run again without it (batch_output::fenced).
  virtual void fence(store::partition_fence) {}
};

} // namespace nf::engine
