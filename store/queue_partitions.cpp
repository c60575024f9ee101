#include "store/queue_partitions.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_map>

#include "proto/errors.hpp"
#include "store/pg/owned_statement.hpp"

namespace nf::store {

namespace {

// The partition whose hash bound `$1` satisfies, read from the bound itself (`FOR VALUES
// WITH (modulus 8, remainder 6)`), so the modulus is the migration's alone.
constexpr statement partition_of{"queues.partition_of", R"(
SELECT c.relname::text AS partition_name
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid,
       regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)') b
 WHERE i.inhparent = '"TaskQueues"'::regclass
   AND satisfies_hash_partition(i.inhparent, b[1]::int, b[2]::int, $1::text))"};

constexpr const char* table = "\"TaskQueues\"";

/// Queue names are the users' own; past this many the cache starts again rather than grow
/// without end.
constexpr size_t max_cached = 10000;

/// A partition name as the catalog gives it for "TaskQueues": "TaskQueues_p" and digits.
bool plain_partition_name(const std::string& name) {
  const std::string prefix = "TaskQueues_p";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0
         && std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

} // namespace

caf::expected<std::string> queue_partition(connection& conn, const std::string& queue) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> known;
  {
    std::lock_guard<std::mutex> guard{mutex};
    if (auto it = known.find(queue); it != known.end())
      return it->second;
  }
  auto r = conn.run1(partition_of, params::of(queue));
  if (!r)
    return std::move(r.error());
  auto name = r->str(0, r->column_named("partition_name"));
  if (!plain_partition_name(name))
    return make_error(errc::internal, "queues.partition_of: \"" + name
                                        + "\" is not a partition name of \"TaskQueues\"");
  std::lock_guard<std::mutex> guard{mutex};
  if (known.size() >= max_cached)
    known.clear();
  known.emplace(queue, name);
  return name;
}

const statement& on_queue_partition(const statement& st, const std::string& partition) {
  return statement_variant(st, std::string{st.name} + "@" + partition, [&] {
    std::string sql = st.sql;
    const std::string named = "\"" + partition + "\"";
    for (auto at = sql.find(table); at != std::string::npos;
         at = sql.find(table, at + named.size()))
      sql.replace(at, std::char_traits<char>::length(table), named);
    return sql;
  });
}

} // namespace nf::store
