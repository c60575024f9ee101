#include "store/webhook_sinks.hpp"

#include <boost/json.hpp>

#include "proto/errors.hpp"

namespace nf::store {

namespace {

// "eventTypes" as JSON: a text[] in text format would need a parser of its own. The secret
// itself is never selected, only whether there is one.
#define NF_SINK_COLUMNS                                                                      \
  R"("id", "url", array_to_json("eventTypes")::text AS event_types, "maxAttempts",)"         \
  R"( "timeoutMs", "enabled", "signingSecret" IS NOT NULL AS signed,)"                       \
  R"( (extract(epoch FROM "createdAt") * 1000)::bigint AS created_ms,)"                      \
  R"( (extract(epoch FROM "updatedAt") * 1000)::bigint AS updated_ms)"

constexpr statement insert{"sinks.create", R"(
INSERT INTO "WebhookSinks" ("namespaceId", "url", "eventTypes", "maxAttempts", "timeoutMs",
                            "enabled", "signingSecret")
VALUES ($1, $2, $3::text[], $4, $5, $6, $7)
RETURNING )" NF_SINK_COLUMNS};

constexpr statement list{"sinks.list", R"(
SELECT )" NF_SINK_COLUMNS R"( FROM "WebhookSinks" WHERE "namespaceId" = $1 ORDER BY "id")"};

constexpr statement get{"sinks.get", R"(
SELECT )" NF_SINK_COLUMNS R"( FROM "WebhookSinks" WHERE "id" = $1 AND "namespaceId" = $2)"};

// A field is written when its flag says so: NULL is a value for "eventTypes" (every type)
// and "signingSecret" (unsigned), so NULL cannot also mean "keep".
constexpr statement update{"sinks.update", R"(
UPDATE "WebhookSinks" SET
  "url" = COALESCE($3, "url"),
  "eventTypes" = CASE WHEN $4::boolean THEN $5::text[] ELSE "eventTypes" END,
  "maxAttempts" = COALESCE($6::integer, "maxAttempts"),
  "timeoutMs" = COALESCE($7::integer, "timeoutMs"),
  "enabled" = COALESCE($8::boolean, "enabled"),
  "signingSecret" = CASE WHEN $9::boolean THEN $10 ELSE "signingSecret" END,
  "updatedAt" = now()
 WHERE "id" = $1 AND "namespaceId" = $2
RETURNING )" NF_SINK_COLUMNS};

constexpr statement remove{"sinks.remove", R"(
DELETE FROM "WebhookSinks" WHERE "id" = $1 AND "namespaceId" = $2)"};

#undef NF_SINK_COLUMNS

caf::expected<webhook_sink_row> row_of(const result& r, int i) {
  webhook_sink_row s;
  s.id = r.str(i, r.column_named("id"));
  s.url = r.str(i, r.column_named("url"));
  const int types = r.column_named("event_types");
  if (!r.is_null(i, types)) {
    boost::json::error_code ec;
    auto parsed = boost::json::parse(r.text(i, types), ec);
    if (ec || !parsed.is_array())
      return make_error(errc::internal, "eventTypes of sink " + s.id + " is not a JSON array");
    s.event_types.emplace();
    for (const auto& t : parsed.as_array())
      if (t.is_string())
        s.event_types->emplace_back(t.as_string().data(), t.as_string().size());
  }
  s.max_attempts = r.i32(i, r.column_named("maxAttempts"));
  s.timeout_ms = r.i32(i, r.column_named("timeoutMs"));
  s.enabled = r.boolean(i, r.column_named("enabled"));
  s.signing_secret_set = r.boolean(i, r.column_named("signed"));
  s.created_ms = r.i64(i, r.column_named("created_ms"));
  s.updated_ms = r.i64(i, r.column_named("updated_ms"));
  return s;
}

std::optional<array_literal> types_param(const std::optional<std::vector<std::string>>& t) {
  if (!t)
    return std::nullopt;
  return text_array(*t);
}

caf::error missing(const std::string& id) {
  return make_error(errc::not_found, "webhook sink " + id + " not found");
}

caf::expected<webhook_sink_row> one(caf::expected<std::optional<result>> r,
                                    const std::string& id) {
  if (!r)
    return std::move(r.error());
  if (!*r)
    return missing(id);
  return row_of(**r, 0);
}

} // namespace

caf::expected<webhook_sink_row> create_webhook_sink(connection& conn, const namespace_id& ns,
                                                    const new_webhook_sink& s) {
  auto r = conn.run1(insert, params::of(ns, s.url, types_param(s.event_types), s.max_attempts,
                                        s.timeout_ms, s.enabled, s.signing_secret));
  if (!r)
    return std::move(r.error());
  return row_of(*r, 0);
}

caf::expected<std::vector<webhook_sink_row>> list_webhook_sinks(connection& conn,
                                                                const namespace_id& ns) {
  auto r = conn.run(list, params::of(ns));
  if (!r)
    return std::move(r.error());
  std::vector<webhook_sink_row> out;
  for (int i = 0; i < r->rows(); ++i) {
    auto s = row_of(*r, i);
    if (!s)
      return std::move(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

caf::expected<webhook_sink_row> get_webhook_sink(connection& conn, const namespace_id& ns,
                                                 const std::string& id) {
  return one(conn.run01(get, params::of(id, ns)), id);
}

caf::expected<webhook_sink_row> update_webhook_sink(connection& conn, const namespace_id& ns,
                                                    const std::string& id,
                                                    const webhook_sink_change& c) {
  std::optional<array_literal> types;
  if (c.event_types)
    types = types_param(*c.event_types);
  std::optional<std::string> secret;
  if (c.signing_secret)
    secret = *c.signing_secret;
  return one(conn.run01(update, params::of(id, ns, c.url, c.event_types.has_value(), types,
                                           c.max_attempts, c.timeout_ms, c.enabled,
                                           c.signing_secret.has_value(), secret)),
             id);
}

caf::expected<void> remove_webhook_sink(connection& conn, const namespace_id& ns,
                                        const std::string& id) {
  auto r = conn.run(remove, params::of(id, ns));
  if (!r)
    return std::move(r.error());
  if (r->affected() == 0)
    return missing(id);
  return {};
}

} // namespace nf::store
