#include "engine/webhook_sinks.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include <boost/json.hpp>

#include "engine/audit_trail.hpp"
#include "engine/relay/delivery.hpp"
#include "engine/relay/event_types.hpp"
#include "flow/uuid.hpp"
#include "proto/errors.hpp"
#include "store/webhook_sinks.hpp"

namespace nf::engine {

namespace json = boost::json;

namespace {

// The relay's own bounds (relay.max_attempts, relay.request_timeout_ms).
constexpr int64_t max_attempts_cap = 1000;
constexpr int64_t timeout_ms_cap = 600000;
constexpr size_t max_url = 2048;
constexpr size_t min_secret = 16;
constexpr size_t max_secret = 1024;

caf::error invalid(const std::string& field, const std::string& why) {
  return make_error(errc::invalid, field + ": " + why);
}

// An http or https URL with a host and no user:password part. Credentials in a URL would be
// logged with every failed delivery and answered with every read; a receiver authenticates a
// delivery by its signature instead (signingSecret).
caf::error check_url(const json::value& v, std::string& out) {
  if (!v.is_string())
    return invalid("url", "expected an http:// or https:// URL (a string)");
  out = std::string{v.as_string()};
  if (out.size() > max_url)
    return invalid("url", "expected at most " + std::to_string(max_url) + " characters");
  for (unsigned char c : out)
    if (c <= 0x20 || c == 0x7f)
      return invalid("url", "expected no spaces or control characters");
  std::string_view rest{out};
  if (rest.substr(0, 7) == "http://")
    rest.remove_prefix(7);
  else if (rest.substr(0, 8) == "https://")
    rest.remove_prefix(8);
  else
    return invalid("url", "expected an http:// or https:// URL, got \"" + out.substr(0, 64) + "\"");
  auto authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos)
    return invalid("url", "credentials in the URL are not accepted: a receiver checks a "
                          "delivery's signature (signingSecret) instead");
  if (authority.empty() || authority.front() == ':')
    return invalid("url", "expected a host after the scheme");
  return {};
}

caf::error check_event_types(const json::value& v,
                             std::optional<std::vector<std::string>>& out) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  if (!v.is_array())
    return invalid("eventTypes", "expected an array of event types, or null for every type");
  const auto& a = v.as_array();
  if (a.empty())
    return invalid("eventTypes", "expected at least one event type (null: every type; to stop "
                                 "deliveries set enabled to false)");
  std::vector<std::string> types;
  std::set<std::string> seen;
  for (size_t i = 0; i < a.size(); ++i) {
    auto field = "eventTypes[" + std::to_string(i) + "]";
    if (!a[i].is_string())
      return invalid(field, "expected an event type (a string)");
    std::string t{a[i].as_string()};
    if (!relay::is_outbox_event_type(t))
      return invalid(field, "unknown event type \"" + t.substr(0, 64)
                              + "\" (e.g. task.completed, workflow.failed, WORKFLOW_STARTED; "
                                "the README lists them)");
    if (!seen.insert(t).second)
      return invalid(field, "\"" + t + "\" is named twice");
    types.push_back(std::move(t));
  }
  out = std::move(types);
  return {};
}

caf::error check_int(const json::value& v, const char* field, int64_t lo, int64_t hi,
                     int32_t& out) {
  if (!v.is_int64() && !v.is_uint64())
    return invalid(field, "expected a whole number from " + std::to_string(lo) + " to "
                            + std::to_string(hi));
  auto n = v.is_int64() ? v.as_int64() : static_cast<int64_t>(std::min<uint64_t>(v.as_uint64(), INT64_MAX));
  if (n < lo || n > hi)
    return invalid(field, "expected a whole number from " + std::to_string(lo) + " to "
                            + std::to_string(hi) + ", got " + std::to_string(n));
  out = static_cast<int32_t>(n);
  return {};
}

caf::error check_secret(const json::value& v, std::optional<std::string>& out) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  if (!v.is_string())
    return invalid("signingSecret", "expected a string (the receiver's HMAC key), or null for "
                                    "unsigned deliveries");
  const auto& s = v.as_string();
  if (s.size() < min_secret || s.size() > max_secret)
    return invalid("signingSecret", "expected " + std::to_string(min_secret) + " to "
                                      + std::to_string(max_secret) + " characters, got "
                                      + std::to_string(s.size()));
  out = std::string{s};
  return {};
}

caf::expected<json::object> body_of(const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object())
    return make_error(errc::invalid, "body: expected a JSON object (the sink)");
  return std::move(v.as_object());
}

caf::error unknown_fields(const json::object& o) {
  for (const auto& kv : o) {
    std::string_view k = kv.key();
    if (k != "url" && k != "eventTypes" && k != "maxAttempts" && k != "timeoutMs"
        && k != "enabled" && k != "signingSecret")
      return invalid(std::string{k}, "unknown field (a sink has url, eventTypes, maxAttempts, "
                                     "timeoutMs, enabled, signingSecret)");
  }
  return {};
}

// Every field of a change, checked; `creating` also requires the URL. A URL the relay would
// not deliver to (webhook_sinks' `allow_plain_http`) is refused.
caf::expected<store::webhook_sink_change> change_of(const json::object& o, bool creating,
                                                    bool allow_plain_http) {
  if (auto e = unknown_fields(o))
    return e;
  store::webhook_sink_change c;
  if (const auto* v = o.if_contains("url")) {
    c.url.emplace();
    if (auto e = check_url(*v, *c.url))
      return e;
    if (auto why = sink_url_refusal(*c.url, allow_plain_http); !why.empty())
      return invalid("url", why + ": nothing could be delivered to it");
  } else if (creating) {
    return invalid("url", "expected the URL deliveries are POSTed to");
  }
  if (const auto* v = o.if_contains("eventTypes")) {
    c.event_types.emplace();
    if (auto e = check_event_types(*v, *c.event_types))
      return e;
  }
  if (const auto* v = o.if_contains("maxAttempts")) {
    c.max_attempts.emplace();
    if (auto e = check_int(*v, "maxAttempts", 1, max_attempts_cap, *c.max_attempts))
      return e;
  }
  if (const auto* v = o.if_contains("timeoutMs")) {
    c.timeout_ms.emplace();
    if (auto e = check_int(*v, "timeoutMs", 1, timeout_ms_cap, *c.timeout_ms))
      return e;
  }
  if (const auto* v = o.if_contains("enabled")) {
    if (!v->is_bool())
      return invalid("enabled", "expected true or false");
    c.enabled = v->as_bool();
  }
  if (const auto* v = o.if_contains("signingSecret")) {
    c.signing_secret.emplace();
    if (auto e = check_secret(*v, *c.signing_secret))
      return e;
  }
  return c;
}

json::object sink_json(const store::webhook_sink_row& s) {
  json::value types = nullptr;
  if (s.event_types) {
    json::array a;
    for (const auto& t : *s.event_types)
      a.emplace_back(t);
    types = std::move(a);
  }
  return json::object{{"id", s.id},
                      {"url", s.url},
                      {"eventTypes", std::move(types)},
                      {"maxAttempts", s.max_attempts},
                      {"timeoutMs", s.timeout_ms},
                      {"enabled", s.enabled},
                      {"signingSecretSet", s.signing_secret_set},
                      {"createdTime", s.created_ms},
                      {"updatedTime", s.updated_ms}};
}

// The URL without its query and fragment, for the audit record: a query may carry a token.
std::string url_for_audit(const std::string& url) {
  return url.substr(0, url.find_first_of("?#"));
}

// What the audit record says of a change: the fields it wrote, by name, never the secret.
json::object change_details(const store::webhook_sink_change& c) {
  json::object d;
  json::array fields;
  if (c.url) {
    fields.emplace_back("url");
    d["url"] = url_for_audit(*c.url);
  }
  if (c.event_types)
    fields.emplace_back("eventTypes");
  if (c.max_attempts)
    fields.emplace_back("maxAttempts");
  if (c.timeout_ms)
    fields.emplace_back("timeoutMs");
  if (c.enabled) {
    fields.emplace_back("enabled");
    d["enabled"] = *c.enabled;
  }
  if (c.signing_secret) {
    fields.emplace_back("signingSecret");
    d["signingSecretSet"] = c.signing_secret->has_value();
  }
  d["fields"] = std::move(fields);
  return d;
}

caf::error check_id(const std::string& id) {
  if (!flow::is_uuid(id))
    return invalid("id", "expected a sink id (a UUID), got \"" + id.substr(0, 64) + "\"");
  return {};
}

} // namespace

caf::expected<std::string> webhook_sinks(store::connection& conn, const msg::sink_request& r,
                                         bool allow_plain_http) {
  const namespace_id ns = r.namespace_id.empty() ? default_namespace : namespace_id{r.namespace_id};
  auto audit = [&](std::string action, const std::string& id, json::object details) {
    auto e = audit_event(r.actor, r.origin, std::move(action), "sink:" + id, std::move(details));
    e.ns = ns;
    return e;
  };
  if (r.op == "list") {
    auto all = store::list_webhook_sinks(conn, ns);
    if (!all)
      return std::move(all.error());
    json::array out;
    for (const auto& s : *all)
      out.push_back(sink_json(s));
    return json::serialize(json::object{{"sinks", std::move(out)}});
  }
  if (r.op == "create") {
    auto body = body_of(r.body_json);
    if (!body)
      return std::move(body.error());
    auto c = change_of(*body, true, allow_plain_http);
    if (!c)
      return std::move(c.error());
    store::new_webhook_sink s;
    s.url = *c->url;
    if (c->event_types)
      s.event_types = *c->event_types;
    s.max_attempts = c->max_attempts.value_or(10);
    s.timeout_ms = c->timeout_ms.value_or(5000);
    s.enabled = c->enabled.value_or(true);
    if (c->signing_secret)
      s.signing_secret = *c->signing_secret;
    auto row = store::audited(
      conn, [&](store::connection& cn) { return store::create_webhook_sink(cn, ns, s); },
      [&](const store::webhook_sink_row& made) {
        return audit("sinks.create", made.id,
                     json::object{{"url", url_for_audit(made.url)},
                                  {"enabled", made.enabled},
                                  {"signingSecretSet", made.signing_secret_set}});
      });
    if (!row)
      return std::move(row.error());
    return json::serialize(sink_json(*row));
  }
  if (r.op != "get" && r.op != "update" && r.op != "remove")
    return invalid("op", "expected list, get, create, update or remove, got \""
                           + r.op.substr(0, 32) + "\"");
  if (auto e = check_id(r.id))
    return e;
  if (r.op == "get") {
    auto row = store::get_webhook_sink(conn, ns, r.id);
    if (!row)
      return std::move(row.error());
    return json::serialize(sink_json(*row));
  }
  if (r.op == "update") {
    auto body = body_of(r.body_json);
    if (!body)
      return std::move(body.error());
    if (body->empty())
      return invalid("body", "expected at least one field to change");
    auto c = change_of(*body, false, allow_plain_http);
    if (!c)
      return std::move(c.error());
    auto row = store::audited(
      conn, [&](store::connection& cn) { return store::update_webhook_sink(cn, ns, r.id, *c); },
      [&](const store::webhook_sink_row&) { return audit("sinks.update", r.id, change_details(*c)); });
    if (!row)
      return std::move(row.error());
    return json::serialize(sink_json(*row));
  }
  auto removed = store::audited(
    conn, [&](store::connection& cn) { return store::remove_webhook_sink(cn, ns, r.id); },
    [&]() { return audit("sinks.remove", r.id, {}); });
  if (!removed)
    return std::move(removed.error());
  return json::serialize(json::object{{"removed", r.id}});
}

} // namespace nf::engine
