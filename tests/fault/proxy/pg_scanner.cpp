#include "pg_scanner.hpp"

#include <algorithm>
#include <cctype>

namespace nf::fault {

namespace {

// Enough of a Q or P body to see past a statement name and leading comments.
constexpr std::size_t prefix_limit = 4096;
constexpr std::uint32_t ssl_request = 80877103;
constexpr std::uint32_t gssenc_request = 80877104;

std::uint32_t be32(const char* p) {
  auto b = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8)
         | std::uint32_t{b[3]};
}

bool starts_with_word(std::string_view s, std::string_view word) {
  if (s.size() < word.size())
    return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(s[i])) != word[i])
      return false;
  if (s.size() == word.size())
    return true;
  auto next = static_cast<unsigned char>(s[word.size()]);
  return !(std::isalnum(next) || next == '_' || next == '$' || next >= 0x80);
}

} // namespace

bool pg_scanner::is_commit_sql(std::string_view sql) {
  std::size_t i = 0;
  while (i < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[i])) || sql[i] == ';') {
      ++i;
    } else if (sql.substr(i, 2) == "--") {
      auto nl = sql.find('\n', i);
      i = nl == std::string_view::npos ? sql.size() : nl + 1;
    } else if (sql.substr(i, 2) == "/*") {
      // Postgres block comments nest.
      int depth = 0;
      while (i < sql.size()) {
        if (sql.substr(i, 2) == "/*") {
          ++depth;
          i += 2;
        } else if (sql.substr(i, 2) == "*/") {
          i += 2;
          if (--depth == 0)
            break;
        } else {
          ++i;
        }
      }
    } else {
      break;
    }
  }
  auto rest = sql.substr(std::min(i, sql.size()));
  return starts_with_word(rest, "COMMIT") || starts_with_word(rest, "END");
}

bool pg_scanner::end_of_frame() {
  if (phase_ == phase::startup) {
    // SSLRequest and GSSENCRequest are answered with one byte, then the
    // real startup packet follows; anything else starts the framed protocol.
    if (startup_code_ != ssl_request && startup_code_ != gssenc_request)
      phase_ = phase::frames;
    return false;
  }
  bool commits = false;
  if (type_ == 'Q') {
    commits = is_commit_sql(prefix_);
  } else if (type_ == 'P') {
    auto name_end = prefix_.find('\0');
    parsed_commit_ = name_end != std::string::npos
                     && is_commit_sql(std::string_view{prefix_}.substr(name_end + 1));
  } else if (type_ == 'E') {
    commits = parsed_commit_;
    parsed_commit_ = false;
  }
  prefix_.clear();
  return commits;
}

void pg_scanner::feed(std::string_view data, const std::function<bool(std::size_t)>& on_commit) {
  std::size_t i = 0;
  while (i < data.size() && phase_ != phase::lost) {
    if (!in_body_) {
      std::size_t header_size = phase_ == phase::startup ? 8 : 5;
      auto take = std::min(header_size - header_have_, data.size() - i);
      std::copy_n(data.data() + i, take, header_ + header_have_);
      header_have_ += take;
      i += take;
      if (header_have_ < header_size)
        return;
      header_have_ = 0;
      std::uint32_t length;
      if (phase_ == phase::startup) {
        length = be32(header_);
        startup_code_ = be32(header_ + 4);
        if (length < 8) {
          phase_ = phase::lost; // not Postgres: stop looking
          return;
        }
        body_left_ = length - 8;
      } else {
        type_ = header_[0];
        length = be32(header_ + 1);
        if (length < 4) {
          phase_ = phase::lost;
          return;
        }
        body_left_ = length - 4;
      }
      in_body_ = true;
    }
    auto take = static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, data.size() - i));
    if ((type_ == 'Q' || type_ == 'P') && phase_ == phase::frames && prefix_.size() < prefix_limit)
      prefix_.append(data.data() + i, std::min(take, prefix_limit - prefix_.size()));
    body_left_ -= static_cast<std::uint32_t>(take);
    i += take;
    if (body_left_ == 0) {
      in_body_ = false;
      if (end_of_frame() && !on_commit(i))
        return;
    }
  }
}

} // namespace nf::fault
