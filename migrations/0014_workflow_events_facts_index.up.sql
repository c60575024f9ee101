-- 0014_workflow_events_facts_index: a partial index on "WorkflowEvents" holding only the
-- events the decider reads back as facts: signals, and the retries, reruns and restarts
-- that may reset a workflow's timeout clock.
-- Decision where the seed is silent: the decider reads these for every evaluation of a
-- workflow with a WAIT or a timeout (store/decide_support.cpp, "decide.history_facts").
-- Through the primary key that read walked every event of the workflow and kept the few of
-- these types, so each evaluation cost more the longer the workflow had run: a loop of a
-- thousand iterations re-read its thousands of events at every step. This index holds a
-- handful of rows per workflow at most, so the read costs one probe per partition.
-- The read repeats the predicate, which is what lets the planner use the index.
CREATE INDEX "WorkflowEvents_facts_idx"
  ON "WorkflowEvents" ("workflowId", "seq")
  WHERE "eventType" IN ('SIGNAL_RECEIVED', 'WORKFLOW_RETRIED', 'WORKFLOW_RERUN',
                        'WORKFLOW_RESTARTED');

SELECT "rename_partition_indexes"('"WorkflowEvents"');
