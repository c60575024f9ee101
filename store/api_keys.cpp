#include "store/api_keys.hpp"

#include <cctype>

#include "proto/errors.hpp"

namespace nf::store {

namespace {

// The role is checked here, not by the enum cast, so the error names the field.
constexpr statement insert_key{"api_keys.insert", R"(
INSERT INTO "ApiKeys" ("name", "role", "namespaceId", "secretHash", "expiresAt")
SELECT $1, $2::api_key_role, n."id", decode($4, 'hex'),
       CASE WHEN $5::bigint IS NULL THEN NULL ELSE now() + $5::bigint * interval '1 second' END
  FROM "Namespaces" n
 WHERE n."name" = $3
RETURNING "id"::text AS "id")"};

constexpr statement list_keys{"api_keys.list", R"(
SELECT k."id"::text AS "id", k."name", k."role"::text AS "role", n."name" AS namespace_name,
       replace(to_char(k."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS created_at,
       replace(to_char(k."expiresAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS expires_at,
       replace(to_char(k."revokedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS revoked_at
  FROM "ApiKeys" k
  JOIN "Namespaces" n ON n."id" = k."namespaceId"
 ORDER BY k."id")"};

constexpr statement revoke_key{"api_keys.revoke", R"(
UPDATE "ApiKeys" SET "revokedAt" = coalesce("revokedAt", now())
 WHERE "id" = $1::uuid
RETURNING "id"::text AS "id")"};

constexpr statement usable_keys{"api_keys.usable", R"(
SELECT k."id"::text AS "id", k."role"::text AS "role", n."name" AS namespace_name,
       encode(k."secretHash", 'hex') AS secret_hash,
       (extract(epoch FROM k."expiresAt") * 1000)::bigint AS expires_at_ms
  FROM "ApiKeys" k
  JOIN "Namespaces" n ON n."id" = k."namespaceId"
 WHERE k."revokedAt" IS NULL)"};

constexpr statement offer_secret{"signing_keys.offer", R"(
INSERT INTO "SigningKeys" ("name", "secret") VALUES ($1, decode($2, 'hex'))
ON CONFLICT ("name") DO NOTHING)"};

constexpr statement read_secret{"signing_keys.read", R"(
SELECT encode("secret", 'hex') AS secret FROM "SigningKeys" WHERE "name" = $1)"};

bool known_role(const std::string& r) {
  return r == "admin" || r == "operator" || r == "worker" || r == "reader";
}

bool is_uuid_text(const std::string& s) {
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  }
  return true;
}

} // namespace

caf::expected<std::string> insert_api_key(connection& conn, const new_api_key& k) {
  if (!known_role(k.role))
    return make_error(errc::invalid, "role: '" + k.role
                                       + "' is not a role (admin, operator, worker, reader)");
  params p = params::of(k.name, k.role, k.namespace_name, k.secret_hash_hex);
  if (k.expires_in_s)
    p.add(*k.expires_in_s);
  else
    p.add(std::nullopt);
  auto r = conn.run01(insert_key, p);
  if (!r)
    return r.error();
  if (!*r)
    return make_error(errc::invalid,
                      "namespace: there is no namespace '" + k.namespace_name + "'");
  return (*r)->str(0, (*r)->column_named("id"));
}

caf::expected<std::vector<api_key_row>> list_api_keys(connection& conn) {
  auto r = conn.run(list_keys);
  if (!r)
    return r.error();
  const int id = r->column_named("id"), name = r->column_named("name"),
            role = r->column_named("role"), ns = r->column_named("namespace_name"),
            created = r->column_named("created_at"), expires = r->column_named("expires_at"),
            revoked = r->column_named("revoked_at");
  std::vector<api_key_row> out;
  for (int row = 0; row < r->rows(); ++row)
    out.push_back({r->str(row, id), r->str(row, name), r->str(row, role), r->str(row, ns),
                   r->str(row, created), r->opt_str(row, expires), r->opt_str(row, revoked)});
  return out;
}

caf::expected<void> revoke_api_key(connection& conn, const std::string& id) {
  if (!is_uuid_text(id))
    return make_error(errc::invalid, "keyId: '" + id + "' is not a key id (a UUID)");
  auto r = conn.run01(revoke_key, params::of(id));
  if (!r)
    return r.error();
  if (!*r)
    return make_error(errc::not_found, "keyId: there is no key " + id);
  return {};
}

caf::expected<std::vector<usable_api_key>> usable_api_keys(connection& conn) {
  auto r = conn.run(usable_keys);
  if (!r)
    return r.error();
  const int id = r->column_named("id"), role = r->column_named("role"),
            ns = r->column_named("namespace_name"), hash = r->column_named("secret_hash"),
            expires = r->column_named("expires_at_ms");
  std::vector<usable_api_key> out;
  for (int row = 0; row < r->rows(); ++row)
    out.push_back({r->str(row, id), r->str(row, role), r->str(row, ns), r->str(row, hash),
                   r->opt_i64(row, expires)});
  return out;
}

caf::expected<std::string> signing_secret(connection& conn, const std::string& name,
                                          const std::string& candidate_hex) {
  if (auto r = conn.run(offer_secret, params::of(name, candidate_hex)); !r)
    return r.error();
  auto r = conn.run1(read_secret, params::of(name));
  if (!r)
    return r.error();
  return r->str(0, r->column_named("secret"));
}

} // namespace nf::store
