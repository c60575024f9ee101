#include "store/namespaces.hpp"

#include "proto/errors.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

namespace {

constexpr statement by_name{"namespace.by_name", R"(
SELECT "id", "name", (extract(epoch FROM "createdAt") * 1000)::bigint AS created_ms
  FROM "Namespaces" WHERE "name" = $1)"};

constexpr statement all{"namespace.list", R"(
SELECT "id", "name", (extract(epoch FROM "createdAt") * 1000)::bigint AS created_ms
  FROM "Namespaces" ORDER BY "name")"};

constexpr statement insert{"namespace.create", R"(
INSERT INTO "Namespaces" ("name") VALUES ($1)
RETURNING "id", "name", (extract(epoch FROM "createdAt") * 1000)::bigint AS created_ms)"};

// The row locked, so a definition registered or a workflow started after the checks below
// cannot slip in: registration takes the same lock (FOR KEY SHARE through the definitions'
// foreign key), and a start names definitions, which the check proves there are none of.
constexpr statement lock_by_name{"namespace.lock", R"(
SELECT "id" FROM "Namespaces" WHERE "name" = $1 FOR UPDATE)"};

constexpr statement holdings{"namespace.holdings", R"(
SELECT (SELECT count(*) FROM "TaskDefinitions" WHERE "namespaceId" = $1) AS task_defs,
       (SELECT count(*) FROM "WorkflowDefinitions" WHERE "namespaceId" = $1) AS workflow_defs,
       (SELECT count(*) FROM "WorkflowExecutions" WHERE "namespaceId" = $1
           AND "status" IN ('RUNNING', 'PAUSED')) AS running,
       (SELECT count(*) FROM "WebhookSinks" WHERE "namespaceId" = $1) AS sinks,
       (SELECT count(*) FROM "VectorIndexes" WHERE "namespaceId" = $1) AS vector_indexes)"};

constexpr statement remove{"namespace.remove", R"(
DELETE FROM "Namespaces" WHERE "id" = $1)"};

namespace_row row_of(const result& r, int i) {
  return namespace_row{namespace_id{r.str(i, r.column_named("id"))},
                       r.str(i, r.column_named("name")), r.i64(i, r.column_named("created_ms"))};
}

caf::error missing(const std::string& name) {
  return make_error(errc::not_found, "namespace \"" + name + "\" not found");
}

} // namespace

caf::expected<namespace_row> find_namespace(connection& conn, const std::string& name) {
  auto r = conn.run01(by_name, params::of(name));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return missing(name);
  return row_of(**r, 0);
}

caf::expected<std::vector<namespace_row>> list_namespaces(connection& conn) {
  auto r = conn.run(all);
  if (!r)
    return std::move(r.error());
  std::vector<namespace_row> out;
  for (int i = 0; i < r->rows(); ++i)
    out.push_back(row_of(*r, i));
  return out;
}

caf::expected<namespace_row> create_namespace(connection& conn, const std::string& name) {
  auto r = conn.run1(insert, params::of(name));
  if (!r) {
    if (code_of(r.error()) == errc::conflict)
      return make_error(errc::conflict, "namespace \"" + name + "\" exists already");
    return std::move(r.error());
  }
  return row_of(*r, 0);
}

caf::expected<void> remove_namespace(connection& conn, const std::string& name,
                                     const audit_event* audit) {
  if (name == "default")
    return make_error(errc::invalid, "name: the namespace \"default\" cannot be removed");
  return perform(conn, [&](transaction& tx) -> caf::expected<void> {
    auto locked = tx.conn().run01(lock_by_name, params::of(name));
    if (!locked)
      return std::move(locked.error());
    if (!*locked)
      return missing(name);
    auto id = (*locked)->str(0, (*locked)->column_named("id"));
    auto h = tx.conn().run1(holdings, params::of(id));
    if (!h)
      return std::move(h.error());
    auto count = [&](const char* column) { return h->i64(0, h->column_named(column)); };
    std::string why;
    auto note = [&](int64_t n, const std::string& what) {
      if (n > 0)
        why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    note(count("task_defs"), "task definition(s)");
    note(count("workflow_defs"), "workflow definition(s)");
    note(count("running"), "running or paused execution(s)");
    note(count("sinks"), "webhook sink(s)");
    note(count("vector_indexes"), "vector index(es)");
    if (!why.empty())
      return make_error(errc::conflict,
                        "namespace \"" + name + "\" still holds " + why + ": remove them first");
    if (auto d = tx.conn().run(remove, params::of(id)); !d)
      return std::move(d.error());
    if (audit)
      if (auto a = append_audit(tx.conn(), *audit); !a)
        return a;
    return caf::expected<void>{};
  });
}

} // namespace nf::store
