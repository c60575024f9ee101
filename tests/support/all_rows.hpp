#pragma once

// "Bad input changes nothing" checks compare this before and after: the rows of every table
// a request could write, as one comparable string (counts, revisions, versions, the latest
// row stamps, every status, the dead letters' attempts).

namespace nf::test {

inline constexpr const char* all_rows_sql = R"(SELECT concat_ws(',',
  (SELECT count(*) FROM "WorkflowExecutions"), (SELECT count(*) FROM "WorkflowEvents"),
  (SELECT count(*) FROM "TaskExecutions"), (SELECT count(*) FROM "TaskQueues"),
  (SELECT count(*) FROM "DecideQueues"), (SELECT count(*) FROM "Timers"),
  (SELECT count(*) FROM "OutboxEvents"), (SELECT count(*) FROM "TaskDefinitions"),
  (SELECT count(*) FROM "WorkflowDefinitions"), (SELECT count(*) FROM "IdempotencyKeys"),
  (SELECT coalesce(sum("revision"), 0) FROM "TaskDefinitions"),
  (SELECT coalesce(max("version"), 0) FROM "WorkflowExecutions"),
  (SELECT coalesce(max("updatedAt")::text, '-') FROM "TaskExecutions"),
  (SELECT coalesce(max("leaseExpiresAt")::text, '-') FROM "TaskQueues"),
  (SELECT coalesce(string_agg("status"::text, ',' ORDER BY "id"), '-') FROM "WorkflowExecutions"),
  (SELECT coalesce(string_agg("status"::text, ',' ORDER BY "id"), '-') FROM "TaskExecutions"),
  (SELECT coalesce(max("attempts"), 0) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL)))";

} // namespace nf::test
