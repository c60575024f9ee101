#include "store/pg/binary_params.hpp"

#include <charconv>
#include <type_traits>
#include <unordered_map>

#include "store/hex.hpp"

namespace nf::store {

namespace {

// Element and array type oids (pg_type.dat; fixed for the built-in types).
struct known_type {
  const char* name;
  uint32_t element;
  uint32_t array;
};

constexpr known_type known_types[] = {
  {"uuid", 2950, 2951},    {"text", 25, 1009},    {"smallint", 21, 1005},
  {"integer", 23, 1007},   {"int", 23, 1007},     {"bigint", 20, 1016},
  {"boolean", 16, 1000},   {"bool", 16, 1000},    {"jsonb", 3802, 3807},
};

const known_type* by_array(uint32_t array_oid) {
  for (const auto& t : known_types)
    if (t.array == array_oid)
      return &t;
  return nullptr;
}

std::vector<uint32_t> scan_declarations(std::string_view sql) {
  std::vector<uint32_t> out;
  std::vector<bool> conflicting;
  for (size_t i = sql.find('$'); i != std::string_view::npos; i = sql.find('$', i + 1)) {
    size_t j = i + 1;
    size_t n = 0;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9')
      n = n * 10 + static_cast<size_t>(sql[j++] - '0');
    if (n == 0 || sql.substr(j, 2) != "::")
      continue;
    j += 2;
    size_t k = j;
    while (k < sql.size() && ((sql[k] >= 'a' && sql[k] <= 'z') || sql[k] == '_'))
      ++k;
    auto name = sql.substr(j, k - j);
    bool is_array = sql.substr(k, 2) == "[]";
    uint32_t oid = 0;
    if (is_array)
      for (const auto& t : known_types)
        if (name == t.name)
          oid = t.array;
    if (out.size() < n) {
      out.resize(n, 0);
      conflicting.resize(n, false);
    }
    // A parameter cast two ways (or once to a type this file does not encode) is left to
    // the server: its text goes as it is.
    auto& slot = out[n - 1];
    if (oid == 0 || (slot != 0 && slot != oid))
      conflicting[n - 1] = true;
    slot = oid;
  }
  for (size_t n = 0; n < out.size(); ++n)
    if (conflicting[n])
      out[n] = 0;
  while (!out.empty() && out.back() == 0)
    out.pop_back();
  return out;
}

/// `bytes` low bytes of `v`, most significant first (the wire's order).
void put_be(std::string& out, uint64_t v, int bytes) {
  char be[8];
  for (int i = 0; i < bytes; ++i)
    be[i] = static_cast<char>((v >> (8 * (bytes - 1 - i))) & 0xff);
  out.append(be, static_cast<size_t>(bytes));
}

void put_int32(std::string& out, int32_t v) {
  put_be(out, static_cast<uint32_t>(v), 4);
}

// The canonical form (8-4-4-4-12) or 32 digits; anything else uuid_in may accept goes
// as text.
bool put_uuid(std::string& out, std::string_view s) {
  bool hyphens = s.size() == 36;
  if (!hyphens && s.size() != 32)
    return false;
  if (hyphens && (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-'))
    return false;
  // The length (16, big-endian) and the 16 bytes, appended at once.
  char bytes[20] = {0, 0, 0, 16};
  size_t at = 0;
  for (int b = 4; b < 20; ++b) {
    if (hyphens && (at == 8 || at == 13 || at == 18 || at == 23))
      ++at;
    int hi = hex_value(s[at]), lo = hex_value(s[at + 1]);
    if ((hi | lo) < 0)
      return false;
    bytes[b] = static_cast<char>(hi << 4 | lo);
    at += 2;
  }
  out.append(bytes, sizeof bytes);
  return true;
}

template <class Int>
bool put_int(std::string& out, std::string_view s) {
  Int v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    return false;
  put_int32(out, static_cast<int32_t>(sizeof(Int)));
  put_be(out, static_cast<uint64_t>(static_cast<std::make_unsigned_t<Int>>(v)), sizeof(Int));
  return true;
}

bool put_element(std::string& out, uint32_t element, std::string_view s) {
  switch (element) {
    case 2950:
      return put_uuid(out, s);
    case 21:
      return put_int<int16_t>(out, s);
    case 23:
      return put_int<int32_t>(out, s);
    case 20:
      return put_int<int64_t>(out, s);
    case 16:
      if (s != "t" && s != "f" && s != "true" && s != "false")
        return false;
      put_int32(out, 1);
      out += s.front() == 't' ? '\1' : '\0';
      return true;
    case 3802: // jsonb's binary form: a version byte, then the text
      put_int32(out, static_cast<int32_t>(s.size() + 1));
      out += '\1';
      out.append(s);
      return true;
    case 25:
      put_int32(out, static_cast<int32_t>(s.size()));
      out.append(s);
      return true;
    default:
      return false;
  }
}

} // namespace

const std::vector<uint32_t>& declared_array_types(const statement& st) {
  if (st.typed_as)
    return declared_array_types(*st.typed_as);
  thread_local std::unordered_map<const char*, std::vector<uint32_t>> cache;
  auto it = cache.find(st.sql);
  if (it == cache.end())
    it = cache.emplace(st.sql, scan_declarations(st.sql)).first;
  return it->second;
}

prepared_types::prepared_types(const statement& st) {
  if (!st.typed_as)
    return;
  const auto& declared = declared_array_types(st);
  count = static_cast<int>(declared.size());
  types = declared.data();
}

std::optional<std::string> binary_array(uint32_t array_oid, std::string_view literal) {
  const known_type* type = by_array(array_oid);
  if (!type || literal.size() < 2 || literal.front() != '{' || literal.back() != '}')
    return std::nullopt;
  // The header (five int32s) goes first with its counts patched at the end, and the
  // elements after it: a 4-byte length in place of each element's quotes and comma keeps
  // the binary form about the size of the text (a uuid's is half), so one allocation holds it.
  std::string out;
  out.reserve(20 + literal.size() + literal.size() / 8);
  out.append(20, '\0');
  int32_t count = 0;
  bool has_null = false;
  std::string unquoted;
  auto body = literal.substr(1, literal.size() - 2);
  size_t i = 0;
  while (i < body.size()) {
    std::string_view element;
    bool is_null = false;
    if (body[i] == '"') {
      ++i;
      // Most elements hold no escape: they are read where they lie. Only one with a
      // backslash is copied, without its escapes.
      size_t close = i;
      while (close < body.size() && body[close] != '"' && body[close] != '\\')
        ++close;
      if (close < body.size() && body[close] == '"') {
        element = body.substr(i, close - i);
        i = close;
      } else {
        unquoted.assign(body.data() + i, close - i);
        for (i = close; i < body.size() && body[i] != '"'; ++i) {
          if (body[i] == '\\' && ++i == body.size())
            return std::nullopt;
          unquoted += body[i];
        }
        element = unquoted;
      }
      if (i == body.size())
        return std::nullopt;
      ++i; // the closing quote
    } else {
      size_t end = body.find(',', i);
      element = body.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
      i += element.size();
      // Nested arrays, spaces Postgres would trim, and the like: the server's business.
      if (element.empty() || element.find_first_of("{}\"\\ \t\r\n") != std::string_view::npos)
        return std::nullopt;
      is_null = element.size() == 4 && (element[0] | 0x20) == 'n' && (element[1] | 0x20) == 'u'
                && (element[2] | 0x20) == 'l' && (element[3] | 0x20) == 'l';
    }
    if (is_null) {
      has_null = true;
      put_int32(out, -1);
    } else if (!put_element(out, type->element, element)) {
      return std::nullopt;
    }
    ++count;
    if (i < body.size()) {
      if (body[i] != ',' || i + 1 == body.size())
        return std::nullopt;
      ++i;
    }
  }
  std::string header;
  put_int32(header, count == 0 ? 0 : 1);
  put_int32(header, has_null ? 1 : 0);
  put_int32(header, static_cast<int32_t>(type->element));
  if (count == 0)
    return header; // no dimension: the empty array is its first three int32s alone
  put_int32(header, count);
  put_int32(header, 1);
  out.replace(0, header.size(), header);
  return out;
}

wire_params::wire_params(const statement& st, const params& p) {
  const auto& declared = declared_array_types(st);
  const auto& values = p.values();
  values_.reserve(values.size());
  lengths_.reserve(values.size());
  formats_.reserve(values.size());
  binary_.reserve(values.size());
  for (size_t n = 0; n < values.size(); ++n) {
    const auto& v = values[n];
    std::optional<std::string> encoded;
    if (v && n < declared.size() && declared[n] != 0)
      encoded = binary_array(declared[n], *v);
    if (encoded) {
      binary_.push_back(std::move(*encoded));
      values_.push_back(binary_.back().data());
      lengths_.push_back(static_cast<int>(binary_.back().size()));
      formats_.push_back(1);
    } else {
      values_.push_back(v ? v->c_str() : nullptr);
      lengths_.push_back(0);
      formats_.push_back(0);
    }
  }
}

} // namespace nf::store
