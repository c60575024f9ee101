-- Undoes 0012_execution_fillfactor: execution partitions back to the default fill.
DO $$
DECLARE
  p regclass;
BEGIN
  FOR p IN SELECT inhrelid::regclass FROM pg_inherits
            WHERE inhparent = '"WorkflowExecutions"'::regclass LOOP
    EXECUTE format('ALTER TABLE %s RESET (fillfactor)', p);
  END LOOP;
END
$$;
