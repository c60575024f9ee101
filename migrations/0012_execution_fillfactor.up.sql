-- 0012_execution_fillfactor: "WorkflowExecutions" partitions keep 30% of each page free.
-- Decision where the seed is silent: an execution row is updated several times per task it
-- runs (the lease's and the report's "lastSeq" allocation, each decision's compare-and-set),
-- and none of those updates changes an indexed column, so each can be a HOT update (no new
-- index entries) if its page has room. Filled to 100%, the pages had none: a 3,000-workflow
-- benchmark made 60% of its 21,000 execution updates on a new page, each adding an entry to
-- all five indexes. A partition made later (store/partitions.cpp) is created with the same
-- setting; Postgres does not let a partitioned parent carry it for them.
DO $$
DECLARE
  p regclass;
BEGIN
  FOR p IN SELECT inhrelid::regclass FROM pg_inherits
            WHERE inhparent = '"WorkflowExecutions"'::regclass LOOP
    EXECUTE format('ALTER TABLE %s SET (fillfactor = 70)', p);
  END LOOP;
END
$$;
