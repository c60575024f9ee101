#include "store/partition_fence.hpp"

#include <cctype>
#include <string>

#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"

namespace nf::store {

namespace {

// One row; "fail_if" (migration 0018) raises NF002 naming every partition whose lease is
// no longer this node's at its epoch, with the lease as it is now. The message's
// "partition P epoch E" pairs are what fenced_partitions reads back. A lease that expired
// but was not taken over still passes: it names this node at this epoch, membership may
// yet renew it (renewal keeps the epoch), and a refusal is final for the epoch refused.
constexpr statement fence_check{"partition.fence", R"(
SELECT "fail_if"((
  SELECT 'partition lease moved on (stale write refused): '
         || string_agg(format('partition %s epoch %s', u.p, u.e)
                       || CASE WHEN l."partition" IS NULL THEN ' (never leased)'
                               ELSE format(' (now epoch %s of node %s, expires %s)', l."epoch",
                                           l."nodeId", l."expiresAt") END,
                       '; ' ORDER BY u.p)
    FROM unnest($2::smallint[], $3::bigint[]) AS u(p, e)
    LEFT JOIN "PartitionLeases" l ON l."partition" = u.p
   WHERE l."partition" IS NULL OR l."nodeId" <> $1::uuid OR l."epoch" <> u.e), 'NF002')
       AS fenced)"};

} // namespace

size_t add_fence_check(pipeline& p, const partition_fence& fence) {
  if (fence.empty())
    return 0;
  std::vector<int64_t> parts, epochs;
  for (const auto& [part, epoch] : fence.epochs) {
    parts.push_back(part);
    epochs.push_back(epoch);
  }
  p.add(fence_check, params::of(fence.node, int_array(parts), int_array(epochs)));
  return 1;
}

bool is_fenced(const caf::error& err) {
  return sqlstate_of(err) == "NF002";
}

std::vector<int16_t> fenced_partitions(const caf::error& err) {
  std::vector<int16_t> out;
  if (!is_fenced(err))
    return out;
  auto msg = message_of(err);
  const std::string key = "partition ";
  for (size_t at = msg.find(key); at != std::string::npos; at = msg.find(key, at + 1)) {
    size_t i = at + key.size(), j = i;
    while (j < msg.size() && std::isdigit(static_cast<unsigned char>(msg[j])) != 0)
      ++j;
    if (j > i && msg.compare(j, 7, " epoch ") == 0)
      out.push_back(static_cast<int16_t>(std::stoi(msg.substr(i, j - i))));
  }
  return out;
}

} // namespace nf::store
