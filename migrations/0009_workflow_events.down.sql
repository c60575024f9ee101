-- Undoes 0009_workflow_events (the trigger goes with the table; then its function and type).
DROP TABLE "WorkflowEvents";
DROP FUNCTION "WorkflowEvents_notify"();
DROP TYPE workflow_event_type;
