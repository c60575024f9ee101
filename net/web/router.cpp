#include "net/web/router.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace nf::net::web {

namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    auto j = path.find('/', i);
    if (j == std::string_view::npos)
      j = path.size();
    out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_param(std::string_view seg) {
  return seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
}

// A literal segment beats a parameter ("/api/workflow/search" is not a workflow id), so
// routes are tried in the order of how many literal segments they have, most first.
bool matches(const std::string& pattern, const std::vector<std::string_view>& segs,
             std::map<std::string, std::string>& params) {
  auto pat = segments(pattern);
  if (pat.size() != segs.size())
    return false;
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < pat.size(); ++i) {
    if (is_param(pat[i])) {
      if (segs[i].empty())
        return false;
      out.emplace(std::string{pat[i].substr(1, pat[i].size() - 2)}, std::string{segs[i]});
    } else if (pat[i] != segs[i]) {
      return false;
    }
  }
  params = std::move(out);
  return true;
}

size_t literal_count(const std::string& pattern) {
  auto segs = segments(pattern);
  return static_cast<size_t>(std::count_if(segs.begin(), segs.end(),
                                           [](auto s) { return !is_param(s); }));
}

std::string method_name(verb v) {
  return std::string{boost::beast::http::to_string(v)};
}

} // namespace

std::optional<query_misfit>
misfit_query(const route& r, const std::vector<std::pair<std::string, std::string>>& query) {
  std::set<std::string_view> seen;
  for (const auto& [name, value] : query) {
    auto it = std::find_if(r.query.begin(), r.query.end(),
                           [&](const param_doc& p) { return p.name == name; });
    if (it == r.query.end()) {
      std::string takes;
      for (const auto& p : r.query)
        takes += (takes.empty() ? "" : ", ") + p.name;
      return query_misfit{name, "unknown query parameter \"" + name + "\" on "
                                  + method_name(r.method) + " " + r.pattern + ": "
                                  + (takes.empty() ? "it takes none" : "it takes " + takes)};
    }
    if (!seen.insert(name).second && !it->repeatable)
      return query_misfit{name, "query parameter \"" + name + "\" given more than once on "
                                  + method_name(r.method) + " " + r.pattern
                                  + ": it takes one value"};
  }
  return std::nullopt;
}

void router::add(route r) {
  routes_.push_back(std::move(r));
  std::stable_sort(routes_.begin(), routes_.end(), [](const route& a, const route& b) {
    return literal_count(a.pattern) > literal_count(b.pattern);
  });
}

router::match_result router::match(verb method, const std::string& path) const {
  match_result out;
  auto segs = segments(path);
  // Among the routes whose pattern fits the path, the one with the most literal segments
  // decides whether the path is known; a wrong method there is 405.
  std::optional<size_t> best_literals;
  for (const auto& r : routes_) {
    std::map<std::string, std::string> params;
    if (!matches(r.pattern, segs, params))
      continue;
    auto lits = literal_count(r.pattern);
    if (best_literals && lits < *best_literals && out.path_known)
      break;
    best_literals = lits;
    out.path_known = true;
    out.allowed.push_back(r.method);
    if (r.method == method && !out.found) {
      out.found = &r;
      out.params = std::move(params);
    }
  }
  return out;
}

} // namespace nf::net::web
