#pragma once

// The HTTP routes of a node, as one table: method, path pattern with `{name}` segments,
// what it does and what it takes (the OpenAPI document is generated from the same table,
// so the two cannot disagree), and its handler.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "net/web/exchange.hpp"
#include "proto/roles.hpp"

namespace nf::net::web {

using handler = std::function<void(const exchange_ptr&)>;

/// What a route reads from its body: nothing, JSON (415 for another content type), or
/// anything (text).
enum class body_kind { none, json, text };

/// The least role a route needs (proto/roles.hpp, shared with the client protocol).
using nf::access;
using nf::access_name;
using nf::role_allows;

struct param_doc {
  std::string name;
  std::string description;
  bool required = false;
  std::string type = "string"; ///< OpenAPI type: string, integer, boolean
  bool repeatable = false;      ///< may be given more than once (each value is read)
};

struct route {
  verb method = verb::get;
  std::string pattern;
  std::string summary;
  std::vector<param_doc> query;
  body_kind body = body_kind::none;
  std::string body_description; ///< what the body holds, when it has one
  std::string answer;           ///< what a success answers
  std::string tag;              ///< the OpenAPI group ("metadata", "workflow", "task", …)
  access needs = access::admin; ///< the least role allowed (x-nodeflow-role in OpenAPI)
  handler fn;
  /// A long poll or a stream: not counted against `http.max_inflight`.
  bool long_lived = false;
};

/// A query parameter that does not fit its route, and why.
struct query_misfit {
  std::string name;
  std::string message;
};

/// The first query parameter that does not fit route `r`: a name the route does not take, or
/// one it takes once given more than once. A parameter is read or refused, never ignored.
std::optional<query_misfit>
misfit_query(const route& r, const std::vector<std::pair<std::string, std::string>>& query);

class router {
public:
  void add(route r);
  const std::vector<route>& routes() const { return routes_; }

  struct match_result {
    const route* found = nullptr;
    std::map<std::string, std::string> params;
    bool path_known = false; ///< some route has this path (a wrong method is 405, not 404)
    std::vector<verb> allowed;
  };
  match_result match(verb method, const std::string& path) const;

private:
  std::vector<route> routes_;
};

} // namespace nf::net::web
