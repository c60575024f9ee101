#pragma once

// Paths into JSON values, shared by ${…} expressions, the SWITCH/DO_WHILE
// evaluator and JSON_TRANSFORM: `a.b[0]['c d']`, and `[*]` where allowed.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

namespace nf::flow {

struct path_segment {
  enum kind_t : unsigned char { key, index, wildcard } kind = key;
  std::string name;       ///< for key
  std::size_t number = 0; ///< for index
};

inline bool operator==(const path_segment& a, const path_segment& b) {
  return a.kind == b.kind && a.name == b.name && a.number == b.number;
}

using json_path = std::vector<path_segment>;

/// A segment whose name points into the text it was parsed from, for checks
/// that need no copies (validation reads every path of a definition).
struct path_segment_view {
  path_segment::kind_t kind = path_segment::key;
  std::string_view name;
  std::size_t number = 0;
};

using json_path_view = std::vector<path_segment_view>;

/// Parses `text` (no leading `$`; it may start with `.name`, `[n]` or a bare
/// name). On failure returns false and sets `error` to what was expected and at
/// which offset.
bool parse_path(std::string_view text, bool allow_wildcard, json_path& out,
                std::string& error);
/// The same, with names as views into `text`.
bool parse_path(std::string_view text, bool allow_wildcard, json_path_view& out,
                std::string& error);

/// The value at `path` below `root`, or nullptr when any step is missing.
const boost::json::value* find(const boost::json::value& root, const json_path& path,
                               std::size_t from = 0);
const boost::json::value* find(const boost::json::object& root, const json_path& path,
                               std::size_t from = 0);

/// Every value matching `path` (wildcards expand over arrays and objects), in
/// document order.
void find_all(const boost::json::value& root, const json_path& path, std::size_t from,
              std::vector<const boost::json::value*>& out);

} // namespace nf::flow
