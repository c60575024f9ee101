// `ends`: every started workflow of a name the run expects an end for reached that end.
// A workflow still RUNNING (or PAUSED) after the run was lost or stuck; another terminal
// status means a fault changed what the workflow did.

#include <set>
#include <vector>

#include "tests/fault/checker/rules.hpp"

namespace nf::fault::detail {

rule_result check_ends(store::connection& conn, const check_options& o) {
  tally t{"ends"};
  if (o.expected_ends.empty())
    return t.done();
  std::vector<std::string> names;
  for (const auto& [name, status] : o.expected_ends)
    names.push_back(name);
  auto r = query(conn, t, std::string{R"(
SELECT "id", "workflowName", "status"::text AS "status"
  FROM "WorkflowExecutions"
 WHERE "startedAt" >= )"} + since_sql + R"( AND "workflowName" = ANY($2::text[])
 ORDER BY "startedAt", "id")",
                 store::params::of(o.since_ms, store::text_array(names).text));
  if (!r)
    return t.done();
  const int id = r->column_named("id"), name = r->column_named("workflowName"),
            status = r->column_named("status");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    const auto& want = o.expected_ends.at(r->str(i, name));
    if (r->text(i, status) != want)
      t.violation("workflow " + r->str(i, id) + " (" + r->str(i, name) + ") is "
                  + r->str(i, status) + ", expected " + want);
  }
  return t.done();
}

} // namespace nf::fault::detail
