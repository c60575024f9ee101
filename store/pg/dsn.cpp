#include "store/pg/dsn.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include <libpq-fe.h>

namespace nf::store {

std::string with_database(const std::string& dsn, const std::string& db) {
  auto scheme = dsn.find("://");
  if (scheme == std::string::npos)
    return dsn + " dbname=" + db;
  auto slash = dsn.find('/', scheme + 3);
  auto query = dsn.find('?');
  std::string tail = query == std::string::npos ? "" : dsn.substr(query);
  auto head = dsn.substr(0, slash == std::string::npos ? std::min(query, dsn.size()) : slash);
  return head + "/" + db + tail;
}

namespace {

constexpr const char* mask = "***";

bool space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// URI userinfo: after "://", up to the last '@' before the host part ends.
std::string redact_uris(const std::string& in) {
  std::string out;
  size_t pos = 0;
  for (size_t at = in.find("://"); at != std::string::npos; at = in.find("://", pos)) {
    size_t begin = at + 3;
    size_t end = begin;
    while (end < in.size() && !space(in[end]) && in[end] != '/' && in[end] != '?'
           && in[end] != '#' && in[end] != '`' && in[end] != '"' && in[end] != '\'')
      ++end;
    size_t last_at = in.rfind('@', end == 0 ? 0 : end - 1);
    size_t colon = in.find(':', begin);
    out.append(in, pos, begin - pos);
    pos = begin;
    if (last_at != std::string::npos && last_at >= begin && last_at < end && colon < last_at) {
      out.append(in, begin, colon + 1 - begin);
      out += mask;
      pos = last_at;
    }
  }
  out.append(in, pos, std::string::npos);
  return out;
}

bool key_boundary(const std::string& s, size_t i) {
  if (i == 0)
    return true;
  char c = s[i - 1];
  return space(c) || c == '?' || c == '&' || c == '"' || c == '\'' || c == '`' || c == '('
         || c == ',' || c == ';';
}

bool iequal_at(const std::string& s, size_t i, const char* word) {
  for (size_t k = 0; word[k]; ++k)
    if (i + k >= s.size() || std::tolower(static_cast<unsigned char>(s[i + k])) != word[k])
      return false;
  return true;
}

// `password = VALUE` and `PGPASSWORD=VALUE`: the value is a quoted string (libpq's
// key=value quoting, backslash escapes) or runs to the next space; in a URI query also
// to the next '&' or '#'.
std::string redact_keys(const std::string& in) {
  std::string out;
  size_t i = 0;
  while (i < in.size()) {
    size_t key_len = 0;
    if (key_boundary(in, i)) {
      if (iequal_at(in, i, "pgpassword"))
        key_len = 10;
      else if (iequal_at(in, i, "password"))
        key_len = 8;
    }
    size_t v = i + key_len;
    if (key_len > 0) {
      while (v < in.size() && (in[v] == ' ' || in[v] == '\t'))
        ++v;
    }
    if (key_len == 0 || v >= in.size() || in[v] != '=') {
      out.push_back(in[i++]);
      continue;
    }
    bool in_query = i > 0 && (in[i - 1] == '?' || in[i - 1] == '&');
    ++v;
    while (v < in.size() && (in[v] == ' ' || in[v] == '\t'))
      ++v;
    out.append(in, i, v - i);
    out += mask;
    if (v < in.size() && in[v] == '\'') {
      size_t e = v + 1;
      while (e < in.size() && in[e] != '\'')
        e += in[e] == '\\' ? 2 : 1;
      i = std::min(in.size(), e + 1);
    } else {
      size_t e = v;
      while (e < in.size() && !space(in[e]) && !(in_query && (in[e] == '&' || in[e] == '#')))
        ++e;
      i = e;
    }
  }
  return out;
}

// The password libpq reads from `dsn` (decoded, unquoted), empty if none; nullopt when
// `dsn` does not parse.
std::optional<std::string> password_of(const std::string& dsn) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
  if (err)
    PQfreemem(err);
  if (opts == nullptr)
    return std::nullopt;
  std::string out;
  for (auto* o = opts; o->keyword; ++o)
    if (std::string{o->keyword} == "password" && o->val)
      out = o->val;
  PQconninfoFree(opts);
  return out;
}

void replace_all(std::string& s, const std::string& what) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 3))
    s.replace(at, what.size(), mask);
}

} // namespace

std::string redact_secrets(const std::string& text) {
  return redact_keys(redact_uris(text));
}

std::string redact_secrets(const std::string& text, const std::string& dsn) {
  auto pw = password_of(dsn);
  if (!pw && redact_secrets(dsn) != dsn)
    return "(message withheld: the connection string does not parse, and the message may quote "
           "its password)";
  auto out = redact_secrets(text);
  // Shorter ones would blot out ordinary words of the message; the patterns still apply.
  if (pw && pw->size() >= 3)
    replace_all(out, *pw);
  return out;
}

} // namespace nf::store
