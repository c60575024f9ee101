#include "store/users.hpp"

#include "proto/errors.hpp"

namespace nf::store {

namespace {

constexpr statement insert_row{"users.insert", R"(
INSERT INTO "Users" ("name", "passwordHash", "role", "namespaceId")
SELECT $1, $2, $3::api_key_role, n."id"
  FROM "Namespaces" n
 WHERE n."name" = $4
RETURNING "id"::text AS "id")"};

constexpr statement list_rows{"users.list", R"(
SELECT u."id"::text AS "id", u."name", u."role"::text AS "role", n."name" AS namespace_name,
       replace(to_char(u."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS created_at,
       replace(to_char(u."disabledAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS disabled_at
  FROM "Users" u
  JOIN "Namespaces" n ON n."id" = u."namespaceId"
 ORDER BY u."id")"};

constexpr statement disable_row{"users.disable", R"(
UPDATE "Users" SET "disabledAt" = coalesce("disabledAt", now())
 WHERE "name" = $1
RETURNING "id"::text AS "id")"};

constexpr statement set_password{"users.set_password", R"(
UPDATE "Users" SET "passwordHash" = $2
 WHERE "name" = $1
RETURNING "id"::text AS "id")"};

constexpr statement active_rows{"users.active", R"(
SELECT u."id"::text AS "id", u."name", u."role"::text AS "role", n."name" AS namespace_name
  FROM "Users" u
  JOIN "Namespaces" n ON n."id" = u."namespaceId"
 WHERE u."disabledAt" IS NULL)"};

constexpr statement credentials_row{"users.credentials", R"(
SELECT u."id"::text AS "id", u."name", u."role"::text AS "role", n."name" AS namespace_name,
       u."passwordHash" AS password_hash
  FROM "Users" u
  JOIN "Namespaces" n ON n."id" = u."namespaceId"
 WHERE u."name" = $1 AND u."disabledAt" IS NULL)"};

bool known_role(const std::string& r) {
  return r == "admin" || r == "operator" || r == "worker" || r == "reader";
}

} // namespace

caf::expected<std::string> insert_user(connection& conn, const new_user& u) {
  if (!known_role(u.role))
    return make_error(errc::invalid, "role: '" + u.role
                                       + "' is not a role (admin, operator, worker, reader)");
  auto r = conn.run01(insert_row, params::of(u.name, u.password_hash, u.role, u.namespace_name));
  if (!r) {
    if (code_of(r.error()) == errc::conflict)
      return make_error(errc::conflict, "name: there is already a user '" + u.name + "'");
    return r.error();
  }
  if (!*r)
    return make_error(errc::invalid,
                      "namespace: there is no namespace '" + u.namespace_name + "'");
  return (*r)->str(0, (*r)->column_named("id"));
}

caf::expected<std::vector<user_row>> list_users(connection& conn) {
  auto r = conn.run(list_rows);
  if (!r)
    return r.error();
  const int id = r->column_named("id"), name = r->column_named("name"),
            role = r->column_named("role"), ns = r->column_named("namespace_name"),
            created = r->column_named("created_at"), disabled = r->column_named("disabled_at");
  std::vector<user_row> out;
  for (int row = 0; row < r->rows(); ++row)
    out.push_back({r->str(row, id), r->str(row, name), r->str(row, role), r->str(row, ns),
                   r->str(row, created), r->opt_str(row, disabled)});
  return out;
}

caf::expected<void> disable_user(connection& conn, const std::string& name) {
  auto r = conn.run01(disable_row, params::of(name));
  if (!r)
    return r.error();
  if (!*r)
    return make_error(errc::not_found, "name: there is no user '" + name + "'");
  return {};
}

caf::expected<void> set_user_password(connection& conn, const std::string& name,
                                      const std::string& password_hash) {
  auto r = conn.run01(set_password, params::of(name, password_hash));
  if (!r)
    return r.error();
  if (!*r)
    return make_error(errc::not_found, "name: there is no user '" + name + "'");
  return {};
}

caf::expected<std::vector<active_user>> active_users(connection& conn) {
  auto r = conn.run(active_rows);
  if (!r)
    return r.error();
  const int id = r->column_named("id"), name = r->column_named("name"),
            role = r->column_named("role"), ns = r->column_named("namespace_name");
  std::vector<active_user> out;
  for (int row = 0; row < r->rows(); ++row)
    out.push_back({r->str(row, id), r->str(row, name), r->str(row, role), r->str(row, ns)});
  return out;
}

caf::expected<std::optional<user_credentials>> user_credentials_of(connection& conn,
                                                                   const std::string& name) {
  auto r = conn.run01(credentials_row, params::of(name));
  if (!r)
    return r.error();
  if (!*r)
    return std::optional<user_credentials>{};
  const auto& row = **r;
  return std::optional<user_credentials>{
    user_credentials{{row.str(0, row.column_named("id")), row.str(0, row.column_named("name")),
                      row.str(0, row.column_named("role")),
                      row.str(0, row.column_named("namespace_name"))},
                     row.str(0, row.column_named("password_hash"))}};
}

} // namespace nf::store
