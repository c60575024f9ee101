// `gap_free_seqs` (I8): each workflow's events are numbered 1..n with no gap and no repeat,
// and n is the execution's "lastSeq", the allocator: an event lost after its seq was taken
// leaves a gap at the end that only "lastSeq" shows.

#include "tests/fault/checker/rules.hpp"

namespace nf::fault::detail {

rule_result check_gap_free_seqs(store::connection& conn, const check_options& o) {
  tally t{"gap_free_seqs"};
  auto r = query(conn, t, std::string{R"(
SELECT w."id", w."lastSeq", count(e."seq") AS "events", count(DISTINCT e."seq") AS "distinct",
       coalesce(min(e."seq"), 0) AS "first", coalesce(max(e."seq"), 0) AS "last",
       (SELECT min(g) FROM generate_series(1, greatest(w."lastSeq", coalesce(max(e."seq"), 0))) g
         WHERE g <> ALL(array_agg(e."seq"))) AS "missing"
  FROM "WorkflowExecutions" w
  LEFT JOIN "WorkflowEvents" e ON e."workflowId" = w."id"
 WHERE w."startedAt" >= )"} + since_sql + R"(
 GROUP BY w."id", w."lastSeq"
 ORDER BY w."id")",
                 store::params::of(o.since_ms));
  if (!r)
    return t.done();
  const int id = r->column_named("id"), last_seq = r->column_named("lastSeq"),
            events = r->column_named("events"), distinct = r->column_named("distinct"),
            first = r->column_named("first"), last = r->column_named("last"),
            missing = r->column_named("missing");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    auto n = r->i64(i, events);
    bool numbered = n == 0 || (r->i64(i, first) == 1 && r->i64(i, last) == n
                               && r->i64(i, distinct) == n);
    if (numbered && r->i64(i, last) == r->i64(i, last_seq))
      continue;
    std::string what = "workflow " + r->str(i, id) + ": " + std::to_string(n) + " events ("
                       + std::to_string(r->i64(i, distinct)) + " distinct seqs "
                       + r->str(i, first) + ".." + r->str(i, last) + "), lastSeq "
                       + r->str(i, last_seq);
    if (!r->is_null(i, missing))
      what += ", seq " + r->str(i, missing) + " missing";
    t.violation(what);
  }
  return t.done();
}

} // namespace nf::fault::detail
