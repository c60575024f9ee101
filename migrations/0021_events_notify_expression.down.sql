-- Undoes 0021_events_notify_expression: the trigger's body as 0009 wrote it.
CREATE OR REPLACE FUNCTION "WorkflowEvents_notify"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_workflow_events', NEW."workflowId"::text || ':' || NEW."seq");
  RETURN NULL;
END
$$;
