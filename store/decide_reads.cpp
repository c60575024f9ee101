#include "store/decide_reads.hpp"

namespace nf::store {

caf::expected<decide_reads> claim_and_read(transaction& tx, const std::vector<shard_id>& shards,
                                           int limit, const std::vector<workflow_id>& expected,
                                           const std::vector<workflow_id>& histories,
                                           const std::vector<namespace_id>& namespaces) {
  pipeline p{tx.conn()};
  add_claim(p, shards, limit);
  add_now_ms(p);
  if (!expected.empty())
    add_snapshot_reads(p, expected);
  if (!histories.empty())
    add_history_facts(p, histories);
  if (!namespaces.empty())
    add_definition_stamps(p, namespaces);
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  const auto& r = *rs;
  decide_reads out;
  out.claims = claims_of(r[0]);
  out.now_ms = now_ms_of(r[1]);
  size_t next = 2;
  if (!expected.empty()) {
    out.snapshots = snapshots_of(r[next], r[next + 1]);
    next += 2;
  }
  if (!histories.empty())
    out.facts = history_facts_of(r[next++]);
  if (!namespaces.empty())
    out.stamps = definition_stamps_of(r[next]);
  return out;
}

} // namespace nf::store
