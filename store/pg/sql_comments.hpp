#pragma once

#include <string>

namespace nf::store {

/// Each `/*<tag> <body> */` in `sql` replaced by `make(body)`: the clauses a statement's
/// variants have and the statement as written keeps as comments (store/pg/pruning.hpp,
/// store/pg/hour_window.hpp).
template <class Make>
std::string expand_comments(std::string sql, const std::string& tag, Make make) {
  const std::string open = "/*" + tag, close = "*/";
  for (auto pos = sql.find(open); pos != std::string::npos; pos = sql.find(open, pos)) {
    auto end = sql.find(close, pos);
    if (end == std::string::npos)
      break;
    auto made = make(sql.substr(pos + open.size(), end - pos - open.size()));
    sql = sql.substr(0, pos) + made + sql.substr(end + close.size());
    pos += made.size();
  }
  return sql;
}

/// A comment's body without the spaces around it.
inline std::string trimmed(const std::string& body) {
  auto first = body.find_first_not_of(' '), last = body.find_last_not_of(' ');
  return first == std::string::npos ? body : body.substr(first, last - first + 1);
}

} // namespace nf::store
