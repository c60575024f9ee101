#include "store/secrets.hpp"

namespace nf::store {

namespace {

// The bytes travel as hex text: no binary parameter format for two cold columns.
constexpr statement put_one{"secret.put", R"(
INSERT INTO "Secrets" AS s ("namespaceId", "name", "keyId", "nonce", "sealed")
VALUES ($1::uuid, $2, $3, decode($4, 'hex'), decode($5, 'hex'))
ON CONFLICT ("namespaceId", "name") DO UPDATE SET
  "keyId" = EXCLUDED."keyId", "nonce" = EXCLUDED."nonce", "sealed" = EXCLUDED."sealed",
  "version" = s."version" + 1, "updatedAt" = now()
RETURNING s."version")"};

constexpr statement read_one{"secret.read", R"(
SELECT "namespaceId", "name", "keyId", encode("nonce", 'hex') AS nonce_hex,
       encode("sealed", 'hex') AS sealed_hex, "version"
  FROM "Secrets" WHERE "namespaceId" = $1::uuid AND "name" = $2)"};

constexpr statement list_all{"secret.list", R"(
SELECT "name", "keyId", "version", "createdAt", "updatedAt"
  FROM "Secrets" WHERE "namespaceId" = $1::uuid ORDER BY "name")"};

constexpr statement remove_one{"secret.remove", R"(
DELETE FROM "Secrets" WHERE "namespaceId" = $1::uuid AND "name" = $2 RETURNING "name")"};

constexpr statement not_under{"secret.not_under", R"(
SELECT "namespaceId", "name", "keyId", encode("nonce", 'hex') AS nonce_hex,
       encode("sealed", 'hex') AS sealed_hex, "version"
  FROM "Secrets" WHERE "keyId" <> $1 ORDER BY "namespaceId", "name")"};

constexpr statement reseal{"secret.reseal", R"(
UPDATE "Secrets" SET "keyId" = $5, "nonce" = decode($6, 'hex'), "sealed" = decode($7, 'hex')
 WHERE "namespaceId" = $1::uuid AND "name" = $2 AND "keyId" = $3 AND "version" = $4
RETURNING "name")"};

std::vector<sealed_secret> sealed_rows(const result& r) {
  const int ns = r.column_named("namespaceId"), name = r.column_named("name"),
            key = r.column_named("keyId"), nonce = r.column_named("nonce_hex"),
            sealed = r.column_named("sealed_hex"), version = r.column_named("version");
  std::vector<sealed_secret> out;
  for (int i = 0; i < r.rows(); ++i)
    out.push_back(sealed_secret{namespace_id{r.str(i, ns)}, r.str(i, name), r.str(i, key),
                                r.str(i, nonce), r.str(i, sealed), r.i32(i, version)});
  return out;
}

} // namespace

caf::expected<int32_t> put_secret(connection& conn, const sealed_secret& s) {
  auto r = conn.run(put_one, params::of(s.ns.str(), s.name, s.key_id, s.nonce_hex, s.sealed_hex));
  if (!r)
    return std::move(r.error());
  return r->i32(0, r->column_named("version"));
}

caf::expected<std::optional<sealed_secret>> read_secret(connection& conn, const namespace_id& ns,
                                                        const std::string& name) {
  auto r = conn.run(read_one, params::of(ns.str(), name));
  if (!r)
    return std::move(r.error());
  auto rows = sealed_rows(*r);
  if (rows.empty())
    return std::optional<sealed_secret>{};
  return std::optional<sealed_secret>{std::move(rows.front())};
}

caf::expected<std::vector<secret_listing>> list_secrets(connection& conn, const namespace_id& ns) {
  auto r = conn.run(list_all, params::of(ns.str()));
  if (!r)
    return std::move(r.error());
  const int name = r->column_named("name"), key = r->column_named("keyId"),
            version = r->column_named("version"), created = r->column_named("createdAt"),
            updated = r->column_named("updatedAt");
  std::vector<secret_listing> out;
  for (int i = 0; i < r->rows(); ++i)
    out.push_back(secret_listing{r->str(i, name), r->str(i, key), r->i32(i, version),
                                 r->str(i, created), r->str(i, updated)});
  return out;
}

caf::expected<bool> remove_secret(connection& conn, const namespace_id& ns,
                                  const std::string& name) {
  auto r = conn.run(remove_one, params::of(ns.str(), name));
  if (!r)
    return std::move(r.error());
  return r->rows() > 0;
}

caf::expected<std::vector<sealed_secret>> secrets_not_under(connection& conn,
                                                            const std::string& key_id) {
  auto r = conn.run(not_under, params::of(key_id));
  if (!r)
    return std::move(r.error());
  return sealed_rows(*r);
}

caf::expected<bool> reseal_secret(connection& conn, const sealed_secret& was,
                                  const sealed_secret& now) {
  auto r = conn.run(reseal, params::of(was.ns.str(), was.name, was.key_id, was.version,
                                       now.key_id, now.nonce_hex, now.sealed_hex));
  if (!r)
    return std::move(r.error());
  return r->rows() > 0;
}

} // namespace nf::store
