#include "flow/json_path.hpp"

#include "flow/problem.hpp"

#include <cctype>

#include <boost/json/value.hpp>

namespace nf::flow {

namespace {

// A table, not comparisons: names are read a character at a time, and
// validation reads every ${…} path of a definition.
struct name_chars {
  bool allowed[256] = {};
  constexpr name_chars() {
    for (int c = 0; c < 256; ++c)
      allowed[c] = is_name_char(static_cast<char>(c)) || c == '$' || c == '@';
  }
};
constexpr name_chars name_char_table;

bool name_char(char c) {
  return name_char_table.allowed[static_cast<unsigned char>(c)];
}

// Where the name starting at `i` ends; locals the compiler keeps in registers.
std::size_t name_end(std::string_view text, std::size_t i) {
  const char* p = text.data() + i;
  const char* end = text.data() + text.size();
  while (p != end && name_char(*p))
    ++p;
  return static_cast<std::size_t>(p - text.data());
}

// Function objects rather than functions, so that each parser inlines its own.
struct make_segment {
  path_segment operator()(path_segment::kind_t kind, std::string_view name,
                          std::size_t number) const {
    return {kind, std::string(name), number};
  }
};

struct make_segment_view {
  path_segment_view operator()(path_segment::kind_t kind, std::string_view name,
                               std::size_t number) const {
    return {kind, name, number};
  }
};

// One parser for both segment types; `make` builds a segment of `Path`'s type.
template <class Path, class Make>
bool parse_path_into(std::string_view text, bool allow_wildcard, Path& out, std::string& error,
                     Make make) {
  out.clear();
  out.reserve(4);
  std::size_t i = 0;
  auto fail = [&](std::string what) {
    error = std::move(what) + " at offset " + std::to_string(i);
    return false;
  };
  auto read_name = [&]() -> bool {
    std::size_t start = i;
    i = name_end(text, i);
    if (i == start)
      return fail("expected a field name");
    out.push_back(make(path_segment::key, text.substr(start, i - start), 0));
    return true;
  };
  if (!text.empty() && text[0] != '.' && text[0] != '[' && !read_name())
    return false;
  while (i < text.size()) {
    if (text[i] == '.') {
      ++i;
      if (!read_name())
        return false;
    } else if (text[i] == '[') {
      ++i;
      if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
        char q = text[i++];
        std::size_t start = i;
        while (i < text.size() && text[i] != q)
          ++i;
        if (i >= text.size())
          return fail("unterminated quoted name");
        out.push_back(make(path_segment::key, text.substr(start, i - start), 0));
        ++i;
      } else if (i < text.size() && text[i] == '*') {
        if (!allow_wildcard)
          return fail("wildcard [*] is not allowed here");
        ++i;
        out.push_back(make(path_segment::wildcard, {}, 0));
      } else {
        std::size_t start = i;
        std::size_t n = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
          if (n > 100000000)
            return fail("array index too large");
          n = n * 10 + static_cast<std::size_t>(text[i] - '0');
          ++i;
        }
        if (i == start)
          return fail("expected an array index, a quoted name or *");
        out.push_back(make(path_segment::index, {}, n));
      }
      if (i >= text.size() || text[i] != ']')
        return fail("expected ']'");
      ++i;
    } else {
      return fail("expected '.' or '['");
    }
  }
  return true;
}

}  // namespace

bool parse_path(std::string_view text, bool allow_wildcard, json_path& out,
                std::string& error) {
  return parse_path_into(text, allow_wildcard, out, error, make_segment{});
}

bool parse_path(std::string_view text, bool allow_wildcard, json_path_view& out,
                std::string& error) {
  return parse_path_into(text, allow_wildcard, out, error, make_segment_view{});
}

const boost::json::value* find(const boost::json::value& root, const json_path& path,
                               std::size_t from) {
  const boost::json::value* v = &root;
  for (std::size_t i = from; i < path.size(); ++i) {
    const auto& seg = path[i];
    if (seg.kind == path_segment::key) {
      const auto* obj = v->if_object();
      if (obj == nullptr)
        return nullptr;
      v = obj->if_contains(seg.name);
    } else if (seg.kind == path_segment::index) {
      const auto* arr = v->if_array();
      if (arr == nullptr || seg.number >= arr->size())
        return nullptr;
      v = &(*arr)[seg.number];
    } else {
      return nullptr;
    }
    if (v == nullptr)
      return nullptr;
  }
  return v;
}

const boost::json::value* find(const boost::json::object& root, const json_path& path,
                               std::size_t from) {
  if (from >= path.size() || path[from].kind != path_segment::key)
    return nullptr;
  const auto* v = root.if_contains(path[from].name);
  return v == nullptr ? nullptr : find(*v, path, from + 1);
}

void find_all(const boost::json::value& root, const json_path& path, std::size_t from,
              std::vector<const boost::json::value*>& out) {
  if (from == path.size()) {
    out.push_back(&root);
    return;
  }
  const auto& seg = path[from];
  if (seg.kind == path_segment::wildcard) {
    if (const auto* arr = root.if_array())
      for (const auto& el : *arr)
        find_all(el, path, from + 1, out);
    else if (const auto* obj = root.if_object())
      for (const auto& kv : *obj)
        find_all(kv.value(), path, from + 1, out);
    return;
  }
  json_path one{seg};
  if (const auto* next = find(root, one))
    find_all(*next, path, from + 1, out);
}

} // namespace nf::flow
