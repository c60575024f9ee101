// POST /api/token: an API key (keyId, keySecret) exchanged for a short-lived token, as
// Conductor's and Orkes' SDKs do before anything else; they then send the token as
// X-Authorization on every request. POST /api/login: the same token for a user's name and
// password (`nodeflow users create`), what the UI signs in with.

#include <optional>

#include <boost/json.hpp>

#include "net/web/authenticator.hpp"
#include "net/web/routes/routes.hpp"

namespace nf::net::web {

namespace {

std::optional<std::string> string_field(const exchange_ptr& ex, const boost::json::object& o,
                                        const char* name) {
  const auto* v = o.if_contains(name);
  if (!v || !v->is_string() || v->as_string().empty()) {
    ex->fail(400, std::string{name} + ": expected a non-empty string", name);
    return std::nullopt;
  }
  return std::string{v->as_string()};
}

} // namespace

void add_token_route(router& r, const route_context& ctx) {
  r.add({verb::post, "/api/token",
         "Exchange an API key for a token (`nodeflow keys create` makes keys); send the "
         "token as X-Authorization (or Authorization: Bearer) on every other request",
         {}, body_kind::json, "{\"keyId\",\"keySecret\"}",
         "{\"token\",\"expiresAt\" (unix seconds)}; 401 when the key is unknown, revoked, "
         "expired or the secret is wrong",
         "auth", access::open, [auth = ctx.auth, lim = ctx.json](const exchange_ptr& ex) {
           if (!auth) {
             ex->fail(404, "authentication is off on this node (auth.enabled false): requests "
                           "need no token");
             return;
           }
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto key_id = string_field(ex, *body, "keyId");
           if (!key_id)
             return;
           auto secret = string_field(ex, *body, "keySecret");
           if (!secret)
             return;
           auth->issue_token(std::move(*key_id), std::move(*secret),
                             [ex](auth_outcome o, std::string token, int64_t expires) {
                               if (o.status != 0) {
                                 ex->fail(o.status, o.message, "keyId");
                                 return;
                               }
                               ex->respond_json(200, boost::json::object{
                                                       {"token", token}, {"expiresAt", expires}});
                             });
         }});
  r.add({verb::post, "/api/login",
         "Exchange a user's name and password for a token (`nodeflow users create` makes "
         "users); the token is used as one from /api/token is",
         {}, body_kind::json, "{\"username\",\"password\"}",
         "{\"token\",\"expiresAt\" (unix seconds)}; 401 (one message) when the user is "
         "unknown or disabled or the password is wrong; 429 when too many logins are being "
         "checked",
         "auth", access::open, [auth = ctx.auth, lim = ctx.json](const exchange_ptr& ex) {
           if (!auth) {
             ex->fail(404, "authentication is off on this node (auth.enabled false): requests "
                           "need no login");
             return;
           }
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto name = string_field(ex, *body, "username");
           if (!name)
             return;
           auto password = string_field(ex, *body, "password");
           if (!password)
             return;
           auth->login(std::move(*name), std::move(*password),
                       [ex](auth_outcome o, std::string token, int64_t expires) {
                         if (o.status != 0) {
                           ex->fail(o.status, o.message, o.status == 401 ? "username" : "");
                           return;
                         }
                         ex->respond_json(200, boost::json::object{{"token", token},
                                                                   {"expiresAt", expires}});
                       });
         }});
  r.add({verb::get, "/api/me",
         "Who the request's credential is: what the web UI shows and which actions it offers",
         {}, body_kind::none, {},
         "{\"auth\": false when authentication is off on this node, \"subject\" "
         "(\"user:<name>\", \"key:<keyId>\" or \"anonymous\"), \"role\", \"namespace\"}",
         "auth", access::reader, [auth = ctx.auth](const exchange_ptr& ex) {
           const auto& who = ex->who();
           ex->respond_json(200, boost::json::object{{"auth", auth != nullptr},
                                                     {"subject", who.subject},
                                                     {"role", who.role},
                                                     {"namespace", who.namespace_name}});
         }});
}

} // namespace nf::net::web
