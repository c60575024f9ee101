#include "store/pg/pruning.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flow/ascii.hpp"
#include "flow/uuid.hpp"
#include "store/ids.hpp"
#include "store/pg/owned_statement.hpp"
#include "store/pg/sql_comments.hpp"

namespace nf::store {

namespace {

/// Calls `f` with each non-NULL element of a one-dimensional array literal of uuids
/// (`{"a","b",NULL}` as `text_array` writes it) until it returns false. False when an
/// element is not a UUID's canonical text (flow::is_uuid): the statement as written then
/// reports it, with the same error as ever, or finds its row by itself.
template <class F>
bool each_element(const std::string& literal, F f) {
  if (literal.size() < 2 || literal.front() != '{' || literal.back() != '}')
    return false;
  size_t at = 1;
  const size_t end = literal.size() - 1;
  while (at < end) {
    auto comma = literal.find(',', at);
    if (comma == std::string::npos || comma > end)
      comma = end;
    std::string item = literal.substr(at, comma - at);
    at = comma + 1;
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"')
      item = item.substr(1, item.size() - 2);
    else if (item == "NULL")
      continue;
    if (!flow::is_uuid(item))
      return false;
    if (!f(std::move(item)))
      break;
  }
  return true;
}

/// The distinct elements of the literal; stops counting past `limit`. Nothing when one
/// is not a UUID's canonical text.
std::vector<std::string> distinct_keys(const std::string& literal, size_t limit) {
  std::vector<std::string> keys;
  bool plain = each_element(literal, [&](std::string item) {
    if (std::find(keys.begin(), keys.end(), item) == keys.end())
      keys.push_back(std::move(item));
    return keys.size() <= limit;
  });
  return plain ? keys : std::vector<std::string>{};
}

/// The earliest and the latest of a batch's workflow ids, when every one is a uuidv7:
/// written in one letter case, their text sorts as their leading 48 bits (Unix
/// milliseconds) do. Nothing for another version, whose `uuid_extract_timestamp` is NULL
/// or not in that prefix: the statement as written then finds (or misses) each row by
/// itself.
std::optional<std::pair<std::string, std::string>> start_bounds(const std::string& literal) {
  std::string lo, hi;
  bool v7 = true;
  bool plain = each_element(literal, [&](std::string id) {
    if (!is_uuidv7_text(id)) {
      v7 = false;
      return false;
    }
    id = flow::ascii_lower(id);
    if (lo.empty() || id < lo)
      lo = id;
    if (hi.empty() || id > hi)
      hi = std::move(id);
    return true;
  });
  if (!plain || !v7 || lo.empty())
    return std::nullopt;
  return std::make_pair(lo, hi);
}

/// How a variant differs from its statement: `count` keys spelled out from parameter
/// `keys_at` on (none when 0), and the start-time bounds at `bounds_at` and after it (none
/// when 0).
struct shape {
  size_t count = 0;
  int keys_at = 0;
  int bounds_at = 0;
};

/// `st` with its `prune:` comments made clauses and each `= ANY($K::uuid[])` spelled as
/// `= ANY(ARRAY[$first::uuid, ...])`, and its `started:` comments made bounds.
std::string rewrite(const statement& st, const shape& s) {
  std::string out = st.sql;
  if (s.count > 0) {
    const std::string marker = "= ANY($" + std::to_string(st.prune_on) + "::uuid[])";
    std::string spelled = "= ANY(ARRAY[";
    for (size_t i = 0; i < s.count; ++i) {
      if (i > 0)
        spelled += ", ";
      spelled += "$" + std::to_string(s.keys_at + static_cast<int>(i)) + "::uuid";
    }
    spelled += "])";
    // `/*prune: <clause> */` is a clause only the variants have: in the statement as written
    // an index probe would search once per key of the whole batch.
    out = expand_comments(out, "prune:", [](const std::string& body) { return body; });
    for (auto pos = out.find(marker); pos != std::string::npos;
         pos = out.find(marker, pos + spelled.size()))
      out.replace(pos, marker.size(), spelled);
  }
  if (s.bounds_at > 0) {
    auto param = [](int n) { return "uuid_extract_timestamp($" + std::to_string(n) + "::uuid)"; };
    out = expand_comments(out, "started:", [&](const std::string& body) {
      auto column = trimmed(body);
      return " AND " + column + " BETWEEN " + param(s.bounds_at) + " AND "
             + param(s.bounds_at + 1) + " ";
    });
  }
  return out;
}

/// The variant of `base` for `s`. The parameters' positions follow from the statement's
/// own count, which is fixed per statement, so the name and the shape's sizes identify
/// the text.
const statement& variant_for(const statement& base, const shape& s) {
  return statement_variant(base, std::string{base.name} + "/" + (s.count ? std::to_string(s.count) : "")
                               + (s.bounds_at ? "r" : ""),
                           [&] { return rewrite(base, s); });
}

} // namespace

const statement& with_pruning_keys(const statement& st, params& p) {
  auto literal_at = [&](int k) -> const std::optional<std::string>* {
    if (k <= 0 || static_cast<size_t>(k) > p.size())
      return nullptr;
    const auto& v = p.values()[static_cast<size_t>(k) - 1];
    return v ? &v : nullptr;
  };
  std::vector<std::string> keys;
  if (const auto* literal = literal_at(st.prune_on)) {
    keys = distinct_keys(**literal, max_pruning_keys);
    if (keys.size() > max_pruning_keys)
      keys.clear();
  }
  std::optional<std::pair<std::string, std::string>> bounds;
  if (const auto* literal = literal_at(st.started_on))
    bounds = start_bounds(**literal);
  if (keys.empty() && !bounds)
    return st;
  shape s;
  if (!keys.empty()) {
    // Four variants per statement, not eight: a count is rounded up to a power of two by
    // repeating a key, which prunes the same partitions.
    s.count = 1;
    while (s.count < keys.size())
      s.count *= 2;
    s.keys_at = static_cast<int>(p.size()) + 1;
    for (size_t i = 0; i < s.count; ++i)
      p.add(i < keys.size() ? keys[i] : keys.front());
  }
  if (bounds) {
    s.bounds_at = static_cast<int>(p.size()) + 1;
    p.add(bounds->first);
    p.add(bounds->second);
  }
  return variant_for(st, s);
}

} // namespace nf::store
