#include "store/poll_data.hpp"

#include <algorithm>
#include <tuple>

#include "store/pg/params.hpp"

namespace nf::store {

namespace {

constexpr statement record{"poll_data.record", R"(
INSERT INTO "PollData" ("namespaceId", "taskType", "domain", "workerId", "lastPollAt")
SELECT u.ns, u.type, u.domain, u.worker, now() - make_interval(secs => u.age_ms / 1000.0)
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[])
       AS u(ns, type, domain, worker, age_ms)
ON CONFLICT ("namespaceId", "taskType", "domain", "workerId")
DO UPDATE SET "lastPollAt" = GREATEST("PollData"."lastPollAt", EXCLUDED."lastPollAt"))"};

constexpr statement read{"poll_data.read", R"(
SELECT "taskType" AS type, "domain", "workerId" AS worker,
       (extract(epoch FROM "lastPollAt") * 1000)::bigint AS at_ms
  FROM "PollData"
 WHERE "namespaceId" = $1::uuid AND ($2::text = '' OR "taskType" = $2::text)
 ORDER BY "taskType", "domain", "workerId"
 LIMIT $3::bigint)"};

// Bounded, so one run never holds locks on a huge backlog.
constexpr statement prune{"poll_data.prune", R"(
DELETE FROM "PollData" p
 USING (SELECT "namespaceId", "taskType", "domain", "workerId" FROM "PollData"
         WHERE "lastPollAt" < now() - make_interval(hours => $1::integer)
         ORDER BY "lastPollAt" LIMIT $2::bigint) x
 WHERE p."namespaceId" = x."namespaceId" AND p."taskType" = x."taskType"
   AND p."domain" = x."domain" AND p."workerId" = x."workerId")"};

auto key_of(const poll_seen& s) {
  return std::tie(s.ns, s.task_type, s.domain, s.worker_id);
}

} // namespace

caf::expected<void> record_polls(connection& conn, std::vector<poll_seen> seen) {
  if (seen.empty())
    return {};
  std::sort(seen.begin(), seen.end(),
            [](const poll_seen& a, const poll_seen& b) { return key_of(a) < key_of(b); });
  // ON CONFLICT cannot update one row twice in a statement: keep each key's latest poll.
  std::vector<poll_seen> rows;
  for (auto& s : seen) {
    if (!rows.empty() && key_of(rows.back()) == key_of(s))
      rows.back().age_ms = std::min(rows.back().age_ms, s.age_ms);
    else
      rows.push_back(std::move(s));
  }
  std::vector<std::string> ns, types, domains, workers;
  std::vector<int64_t> ages;
  for (const auto& s : rows) {
    ns.push_back(s.ns.str());
    types.push_back(s.task_type);
    domains.push_back(s.domain);
    workers.push_back(s.worker_id);
    ages.push_back(std::max<int64_t>(s.age_ms, 0));
  }
  auto r = conn.run(record, params::of(text_array(ns), text_array(types), text_array(domains),
                                       text_array(workers), int_array(ages)));
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<std::vector<poll_row>> read_poll_data(connection& conn, const namespace_id& ns,
                                                    const std::string& task_type,
                                                    int64_t limit) {
  auto r = conn.run(read, params::of(ns, task_type, limit));
  if (!r)
    return std::move(r.error());
  std::vector<poll_row> out;
  const int t = r->column_named("type"), d = r->column_named("domain"),
            w = r->column_named("worker"), at = r->column_named("at_ms");
  for (int row = 0; row < r->rows(); ++row)
    out.push_back({r->str(row, t), r->str(row, d), r->str(row, w), r->i64(row, at)});
  return out;
}

caf::expected<int64_t> prune_poll_data(connection& conn, int64_t retention_hours,
                                       int64_t limit) {
  auto r = conn.run(prune, params::of(retention_hours, limit));
  if (!r)
    return std::move(r.error());
  return r->affected();
}

} // namespace nf::store
