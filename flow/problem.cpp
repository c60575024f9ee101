#include "flow/problem.hpp"

#include <algorithm>
#include <charconv>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

namespace nf::flow {

std::string to_string(const problem& p) {
  return p.path + ": " + p.message;
}

std::string path_key(std::string_view base, std::string_view key) {
  bool plain = !key.empty();
  for (char c : key)
    plain = plain && is_name_char(c);
  std::string out(base);
  if (plain) {
    if (!out.empty())
      out += '.';
    out += key;
  } else {
    out += '[';
    out += quoted(key);
    out += ']';
  }
  return out;
}

std::string path_index(std::string_view base, std::size_t i) {
  // Sized once and filled in: a path is made for every task read and validated.
  char digits[20];
  auto n = static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, i).ptr - digits);
  std::string out(base.size() + 1 + n + 1, '[');
  base.copy(out.data(), base.size());
  std::copy(digits, digits + n, out.data() + base.size() + 1);
  out.back() = ']';
  return out;
}

std::string path_chain::str() const {
  if (parent_ == nullptr)
    return std::string(base_);
  return is_index_ ? path_index(parent_->str(), index_) : path_key(parent_->str(), key_);
}

std::string quoted(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

} // namespace nf::flow
