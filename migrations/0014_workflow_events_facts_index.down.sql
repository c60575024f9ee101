-- Undoes 0014_workflow_events_facts_index: the facts read walks the primary key again.
DROP INDEX "WorkflowEvents_facts_idx";
