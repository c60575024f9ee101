#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nf::flow {

/// One thing wrong with a definition: where (a field path such as
/// `tasks[3].inputParameters.x`, or `$` for the document itself) and what was
/// expected. Parsing and validation report every problem, never just the first.
struct problem {
  std::string path;
  std::string message;
};

inline bool operator==(const problem& a, const problem& b) {
  return a.path == b.path && a.message == b.message;
}

using problems = std::vector<problem>;

/// Letters, digits, '_' and '-' (ASCII): names that need no quoting.
constexpr bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
         || c == '-';
}

/// "path: message"
std::string to_string(const problem& p);

/// `base.key`, or `base["key"]` when the key is not a plain identifier.
std::string path_key(std::string_view base, std::string_view key);
/// `base[i]`
std::string path_index(std::string_view base, std::size_t i);

/// A field path as a chain of steps, each living on the stack of the walk
/// that made it, spelled out only when a problem names it: most paths a check
/// walks never are. A step must outlive the steps built on it.
class path_chain {
 public:
  explicit path_chain(std::string_view base) : base_(base) {}
  path_chain(const path_chain& parent, std::string_view key) : parent_(&parent), key_(key) {}
  path_chain(const path_chain& parent, std::size_t index)
    : parent_(&parent), index_(index), is_index_(true) {}

  /// The text path_key and path_index would have built step by step.
  std::string str() const;

 private:
  std::string_view base_;
  const path_chain* parent_ = nullptr;
  std::string_view key_;
  std::size_t index_ = 0;
  bool is_index_ = false;
};

/// `"text"` with JSON escaping, for messages that quote user input.
std::string quoted(std::string_view text);

} // namespace nf::flow
