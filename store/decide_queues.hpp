#pragma once

// The decider's wake, the "DecideQueues" upsert (DESIGN.md I2, no lost wakeup), spelt once
// for every statement that makes one: the completions' (store/task_transitions.cpp), the
// decider's requeue (store/decisions.cpp) and the start's (store/workflows.cpp). Each makes
// it a part of a statement it sends anyway, so it is a string literal for the statement's
// text: the statement stays one constexpr statement, its identifiers checked at compile time
// (store/sql_check.hpp), and a wake costs no statement or round trip of its own.
//
// DO UPDATE, never DO NOTHING: a decider holding the row FOR UPDATE makes the upsert wait,
// and once the decider deleted the row it claimed, the upsert inserts a fresh one. With DO
// NOTHING, a wake committed after the decider's snapshot was taken would be dropped. Only
// "reason" changes: "enqueuedAt" is left alone, so a workflow woken again keeps its place in
// line.
//
// `rows` is a query of the rows to wake, one per workflow (an upsert cannot touch a row twice
// in one statement), with its columns in this order: workflow id, namespace id, the
// workflow's "startedAt", shard, reason. Several rows lock their "DecideQueues" rows in the
// order the query yields them: a batch that can meet another yields them by workflow id.
#define NF_WAKE_DECIDERS(rows)                                                                 \
  R"(INSERT INTO "DecideQueues")"                                                              \
  R"( ("workflowId", "namespaceId", "workflowStartedAt", "shard", "reason") )" rows            \
  R"( ON CONFLICT ("workflowId") DO UPDATE SET "reason" = EXCLUDED."reason")"
