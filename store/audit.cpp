#include "store/audit.hpp"

#include "proto/errors.hpp"
#include "store/json.hpp"
#include "store/pg/pipeline.hpp"

namespace nf::store {

namespace {

// The namespace's name is read here, in the writing transaction: names are editable, and
// the record keeps the one the actor saw.
constexpr statement insert_audit{"audit.insert", R"(
INSERT INTO "AuditEvents" ("actor", "origin", "namespace", "action", "target", "details")
SELECT u.actor, u.origin, n."name", u.action, u.target, u.details
  FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[])
       WITH ORDINALITY AS u(actor, origin, ns, action, target, details, ord)
  LEFT JOIN "Namespaces" n ON n."id" = u.ns
 ORDER BY u.ord)"};

// Oldest first, keyset-paged by "id" (a uuidv7, so it orders like "at").
constexpr statement select_audit{"audit.read", R"(
SELECT a."id", (extract(epoch FROM a."at") * 1000)::bigint AS at_ms, a."actor", a."origin",
       a."namespace", a."action", a."target", a."details"::text AS details
  FROM "AuditEvents" a
 WHERE ($1::bigint IS NULL OR a."at" >= to_timestamp($1::bigint / 1000.0))
   AND ($2::text IS NULL OR a."action" = $2::text)
   AND ($3::uuid IS NULL OR a."id" > $3::uuid)
   AND ($5::text IS NULL OR a."namespace" = $5::text
        OR ($5::text = 'default' AND a."namespace" IS NULL))
 ORDER BY a."id"
 LIMIT $4::integer)"};

caf::expected<params> audit_params(const std::vector<audit_event>& events) {
  std::vector<std::string> actors, origins, actions, targets;
  std::vector<std::optional<std::string>> namespaces;
  std::vector<json_text> details;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    auto missing = e.actor.empty() ? "actor" : e.origin.empty() ? "origin"
                                             : e.action.empty() ? "action" : nullptr;
    if (missing != nullptr)
      return make_error(errc::invalid, std::string{"audit event "} + std::to_string(i) + ": "
                                         + missing + ": expected a non-empty string");
    actors.push_back(e.actor);
    origins.push_back(e.origin);
    namespaces.push_back(e.ns ? std::optional<std::string>{e.ns->str()} : std::nullopt);
    actions.push_back(e.action);
    targets.push_back(e.target);
    details.push_back(json(e.details));
  }
  return params::of(text_array(actors), text_array(origins), text_array(namespaces),
                    text_array(actions), text_array(targets), json_array(details));
}

} // namespace

caf::expected<void> append_audits(connection& conn, const std::vector<audit_event>& events) {
  if (events.empty())
    return {};
  auto p = audit_params(events);
  if (!p)
    return std::move(p.error());
  if (auto r = conn.run(insert_audit, *p); !r)
    return std::move(r.error());
  return {};
}

caf::expected<void> append_audit(connection& conn, const audit_event& event) {
  return append_audits(conn, {event});
}

caf::expected<void> add_audits(pipeline& pl, const std::vector<audit_event>& events) {
  if (events.empty())
    return {};
  auto p = audit_params(events);
  if (!p)
    return std::move(p.error());
  pl.add(insert_audit, std::move(*p));
  return {};
}

caf::expected<audit_page> read_audit(connection& conn, const audit_query& q) {
  if (q.limit < 1 || q.limit > 1000)
    return make_error(errc::invalid,
                      "limit: expected an integer 1 … 1000, got " + std::to_string(q.limit));
  auto r = conn.run(select_audit, params::of(q.since_ms, q.action, q.after, q.limit, q.namespace_name));
  if (!r)
    return std::move(r.error());
  const int id = r->column_named("id"), at = r->column_named("at_ms"),
            actor = r->column_named("actor"), origin = r->column_named("origin"),
            ns = r->column_named("namespace"), action = r->column_named("action"),
            target = r->column_named("target"), details = r->column_named("details");
  audit_page page;
  for (int i = 0; i < r->rows(); ++i)
    page.rows.push_back(audit_row{r->str(i, id), r->i64(i, at), r->str(i, actor),
                                  r->str(i, origin), r->opt_str(i, ns), r->str(i, action),
                                  r->str(i, target), r->str(i, details)});
  if (static_cast<int>(page.rows.size()) == q.limit)
    page.next = page.rows.back().id;
  return page;
}

} // namespace nf::store
