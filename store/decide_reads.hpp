#pragma once

// The decider's reads before it decides, in one round trip. A start or a completion is
// decided in its own transaction (docs/engine.md §3), and at low load that transaction's
// time is mostly round trips around short statements: the claim, the clock, the snapshot,
// the history facts and the definition stamps would be five. For the workflows the caller
// expects its claim to hold (those its own starts and completions just enqueued) they go
// together, the claim first and the clock second. Postgres runs a pipeline's statements one
// after another, each on a fresh snapshot (READ COMMITTED), so every read follows the
// claim's row locks (I2) and the clock follows the claim. What the claim holds beyond the
// expected workflows the caller reads afterwards.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/decide_support.hpp"
#include "store/decisions.hpp"

namespace nf::store {

struct decide_reads {
  std::vector<decide_claim> claims;
  int64_t now_ms = 0;  ///< server_now_ms(), read after the claim
  /// The snapshots of the expected workflows that exist, claimed or not: the caller
  /// decides only what it claimed.
  std::vector<workflow_snapshot> snapshots;
  std::map<std::string, history_facts> facts;   ///< of `histories`
  std::map<std::string, std::string> stamps;    ///< of `namespaces`
};

/// claim_decide_batch, server_now_ms, then load_snapshots of `expected`,
/// load_history_facts of `histories` (those of the expected workflows whose facts the
/// caller may need) and load_definition_stamps of `namespaces` (each skipped when empty).
/// `after` (empty, or one per expected workflow): the task rows the caller knows
/// (add_snapshot_reads): only those past them are read.
caf::expected<decide_reads> claim_and_read(transaction& tx, const std::vector<shard_id>& shards,
                                           int limit, const std::vector<workflow_id>& expected,
                                           const std::vector<workflow_id>& histories,
                                           const std::vector<namespace_id>& namespaces,
                                           const std::vector<std::optional<task_id>>& after = {});

/// The same after the statements the caller put in `p` already (writes whose effects the
/// reads must see: they run first, in the same round trip). `rs` receives every result
/// of the pipeline, the caller's first.
caf::expected<decide_reads> claim_and_read(pipeline& p, std::vector<result>& rs,
                                           const std::vector<shard_id>& shards, int limit,
                                           const std::vector<workflow_id>& expected,
                                           const std::vector<workflow_id>& histories,
                                           const std::vector<namespace_id>& namespaces,
                                           const std::vector<std::optional<task_id>>& after = {});

} // namespace nf::store
