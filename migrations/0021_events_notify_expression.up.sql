-- 0021_events_notify_expression: the history's NOTIFY trigger calls pg_notify as an expression.
-- Decision where the seed is silent (it prescribes the AFTER INSERT … FOR EACH ROW trigger and
-- its payload, not the body): PL/pgSQL runs a PERFORM as a query through SPI, with an
-- executor set up and torn down for every event row, while an assignment of a simple
-- expression is evaluated in place. The trigger was about half of an event row's insert
-- (20,000 rows: ~450 ms with it, ~170 ms without); evaluated in place it costs half of
-- that (~310 ms; docs/perf/). Same trigger, same timing, same payload:
-- pg_notify returns void, which a variable cannot hold, so its result is kept as text.
CREATE OR REPLACE FUNCTION "WorkflowEvents_notify"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  sent text;
BEGIN
  sent := pg_notify('node_flow_workflow_events', NEW."workflowId"::text || ':' || NEW."seq")::text;
  RETURN NULL;
END
$$;
