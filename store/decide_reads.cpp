#include "store/decide_reads.hpp"

#include "store/payloads.hpp"

namespace nf::store {

caf::expected<decide_reads> claim_and_read(transaction& tx, const std::vector<shard_id>& shards,
                                           int limit, const std::vector<workflow_id>& expected,
                                           const std::vector<workflow_id>& histories,
                                           const std::vector<namespace_id>& namespaces,
                                           const std::vector<std::optional<task_id>>& after) {
  pipeline p{tx.conn()};
  std::vector<result> rs;
  return claim_and_read(p, rs, shards, limit, expected, histories, namespaces, after);
}

caf::expected<decide_reads> claim_and_read(pipeline& p, std::vector<result>& rs,
                                           const std::vector<shard_id>& shards, int limit,
                                           const std::vector<workflow_id>& expected,
                                           const std::vector<workflow_id>& histories,
                                           const std::vector<namespace_id>& namespaces,
                                           const std::vector<std::optional<task_id>>& after) {
  const size_t base = p.size();
  add_claim(p, shards, limit);
  add_now_ms(p);
  if (!expected.empty())
    add_snapshot_reads(p, expected, after);
  if (!histories.empty())
    add_history_facts(p, histories);
  if (!namespaces.empty())
    add_definition_stamps(p, namespaces);
  auto ran = p.run();
  if (!ran)
    return std::move(ran.error());
  rs = std::move(*ran);
  const auto& r = rs;
  decide_reads out;
  out.claims = claims_of(r[base]);
  out.now_ms = now_ms_of(r[base + 1]);
  size_t next = base + 2;
  if (!expected.empty()) {
    out.snapshots = snapshots_of(r[next], r[next + 1]);
    // Only a workflow with a value out of line costs this read (store/payloads.hpp).
    if (auto resolved = resolve_payloads(p.conn(), out.snapshots); !resolved)
      return std::move(resolved.error());
    next += 2;
  }
  if (!histories.empty()) {
    auto facts = history_facts_of(p.conn(), r[next++]);
    if (!facts)
      return std::move(facts.error());
    out.facts = std::move(*facts);
  }
  if (!namespaces.empty())
    out.stamps = definition_stamps_of(r[next]);
  return out;
}

} // namespace nf::store
