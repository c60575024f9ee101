// GET /api/openapi.json: the OpenAPI 3 document of every route, generated from the route
// table itself, so a route cannot exist undocumented or be documented and missing.

#include <boost/json.hpp>

#include "flow/ascii.hpp"
#include "net/web/routes/routes.hpp"

namespace nf::net::web {

namespace {

std::vector<std::string> path_params(const std::string& pattern) {
  std::vector<std::string> out;
  for (size_t i = pattern.find('{'); i != std::string::npos; i = pattern.find('{', i + 1)) {
    auto j = pattern.find('}', i);
    if (j == std::string::npos)
      break;
    out.push_back(pattern.substr(i + 1, j - i - 1));
  }
  return out;
}

boost::json::object typed(const char* type) {
  return boost::json::object{{"type", type}};
}

boost::json::object error_schema() {
  boost::json::object problem{{"type", "object"}};
  problem["properties"] =
    boost::json::object{{"path", typed("string")}, {"message", typed("string")}};
  boost::json::object problems{{"type", "array"}};
  problems["items"] = std::move(problem);
  boost::json::object props{{"status", typed("integer")},
                            {"message", typed("string")},
                            {"retryable", typed("boolean")}};
  props["validationErrors"] = std::move(problems);
  boost::json::object out{{"type", "object"}};
  out["properties"] = std::move(props);
  return out;
}

} // namespace

boost::json::object openapi_document(const router& table) {
  boost::json::object paths;
  for (const auto& r : table.routes()) {
    boost::json::object op;
    op["summary"] = r.summary;
    op["tags"] = boost::json::array{boost::json::value(r.tag)};
    op["operationId"] = flow::ascii_lower(boost::beast::http::to_string(r.method)) + r.pattern;
    op["x-nodeflow-role"] = access_name(r.needs);
    if (r.needs != access::open)
      op["security"] = boost::json::array{boost::json::object{{"token", boost::json::array{}}}};
    boost::json::array params;
    for (const auto& p : path_params(r.pattern))
      params.push_back(boost::json::object{
        {"name", p}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    for (const auto& q : r.query) {
      boost::json::object schema{{"type", q.type}};
      if (q.repeatable) // ?name=a&name=b: OpenAPI's default style (form, exploded)
        schema = {{"type", "array"}, {"items", std::move(schema)}};
      params.push_back(boost::json::object{{"name", q.name},
                                           {"in", "query"},
                                           {"required", q.required},
                                           {"description", q.description},
                                           {"schema", std::move(schema)}});
    }
    op["parameters"] = std::move(params);
    if (r.body != body_kind::none) {
      auto type = r.body == body_kind::json ? "application/json" : "text/plain";
      op["requestBody"] = boost::json::object{
        {"description", r.body_description},
        {"content", boost::json::object{{type, boost::json::object{{"schema", boost::json::object{}}}}}}};
    }
    op["responses"] = boost::json::object{
      {"200", {{"description", r.answer}}},
      {"default", {{"description", "an error: status, message and the field that is wrong"},
                   {"content", {{"application/json",
                                 {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}}}};
    auto& item = paths[r.pattern];
    if (!item.is_object())
      item = boost::json::object{};
    item.as_object()[flow::ascii_lower(boost::beast::http::to_string(r.method))] = std::move(op);
  }
  return {{"openapi", "3.0.3"},
          {"info", {{"title", "nodeflow"},
                    {"description", "A durable workflow engine; Conductor-compatible REST, "
                                    "the history as Server-Sent Events, Prometheus metrics"},
                    {"version", "1"}}},
          {"paths", std::move(paths)},
          {"components",
           {{"schemas", {{"Error", error_schema()}}},
            {"securitySchemes",
             {{"token",
               {{"type", "apiKey"},
                {"in", "header"},
                {"name", "X-Authorization"},
                {"description", "a token from POST /api/token (Authorization: Bearer "
                                "<token> works too); x-nodeflow-role names the least role "
                                "an operation needs: reader < worker < operator < admin"}}}}}}}};
}

void add_openapi_route(router& r, const route_context& ctx) {
  r.add({verb::get, "/api/openapi.json", "This document: every route of the node", {},
         body_kind::none, {}, "an OpenAPI 3 document", "meta", access::open,
         [table = ctx.table](const exchange_ptr& ex) {
           ex->respond_json(200, openapi_document(*table));
         }});
}

} // namespace nf::net::web
