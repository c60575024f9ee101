#include "store/pg/pruning.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nf::store {

namespace {

bool plain_uuid_text(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

/// The distinct non-NULL elements of a one-dimensional array literal of uuids
/// (`{"a","b",NULL}` as `text_array` writes it); stops counting past `limit`. Nothing
/// when an element is not plain uuid text: the statement as written then reports it,
/// with the same error as ever.
std::vector<std::string> distinct_keys(const std::string& literal, size_t limit) {
  std::vector<std::string> keys;
  if (literal.size() < 2 || literal.front() != '{' || literal.back() != '}')
    return keys;
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
    if (!plain_uuid_text(item))
      return {};
    if (std::find(keys.begin(), keys.end(), item) != keys.end())
      continue;
    keys.push_back(std::move(item));
    if (keys.size() > limit)
      break;
  }
  return keys;
}

/// `st` with its `prune:` comments made clauses and each `= ANY($K::uuid[])` spelled as
/// `= ANY(ARRAY[$first::uuid, ...])`.
std::string rewrite(const char* sql, int array_param, int first, size_t count) {
  const std::string marker = "= ANY($" + std::to_string(array_param) + "::uuid[])";
  std::string spelled = "= ANY(ARRAY[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0)
      spelled += ", ";
    spelled += "$" + std::to_string(first + static_cast<int>(i)) + "::uuid";
  }
  spelled += "])";
  std::string out = sql;
  // `/*prune: <clause> */` is a clause only the variants have: in the statement as written
  // an index probe would search once per key of the whole batch.
  static const std::string open = "/*prune:", close = "*/";
  for (auto pos = out.find(open); pos != std::string::npos; pos = out.find(open, pos)) {
    auto end = out.find(close, pos);
    if (end == std::string::npos)
      break;
    out = out.substr(0, pos) + out.substr(pos + open.size(), end - pos - open.size())
          + out.substr(end + close.size());
  }
  for (auto pos = out.find(marker); pos != std::string::npos;
       pos = out.find(marker, pos + spelled.size()))
    out.replace(pos, marker.size(), spelled);
  return out;
}

struct variant {
  std::string name;
  std::string sql;
  statement st{nullptr, nullptr};
};

class registry {
public:
  const statement& get(const statement& base, size_t params_before, size_t count) {
    std::lock_guard<std::mutex> guard{mutex_};
    auto key = std::make_pair(std::string{base.name}, count);
    auto& slot = variants_[key];
    if (!slot) {
      slot = std::make_unique<variant>();
      slot->name = std::string{base.name} + "/" + std::to_string(count);
      slot->sql = rewrite(base.sql, base.prune_on, static_cast<int>(params_before) + 1, count);
      slot->st = statement{slot->name.c_str(), slot->sql.c_str()};
    }
    return slot->st;
  }

private:
  std::mutex mutex_;
  std::map<std::pair<std::string, size_t>, std::unique_ptr<variant>> variants_;
};

registry& variants() {
  static registry r;
  return r;
}

} // namespace

const statement& with_pruning_keys(const statement& st, params& p) {
  if (st.prune_on <= 0 || static_cast<size_t>(st.prune_on) > p.size())
    return st;
  const auto& literal = p.values()[static_cast<size_t>(st.prune_on) - 1];
  if (!literal)
    return st;
  auto keys = distinct_keys(*literal, max_pruning_keys);
  if (keys.empty() || keys.size() > max_pruning_keys)
    return st;
  // Four variants per statement, not eight: a count is rounded up to a power of two by
  // repeating a key, which prunes the same partitions.
  size_t slots = 1;
  while (slots < keys.size())
    slots *= 2;
  const auto& v = variants().get(st, p.size(), slots);
  for (size_t i = 0; i < slots; ++i)
    p.add(i < keys.size() ? keys[i] : keys.front());
  return v;
}

} // namespace nf::store
