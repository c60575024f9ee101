-- Undoes 0018_queue_statistics: the default autovacuum analyse threshold again.
DO $$
DECLARE
  t regclass;
BEGIN
  FOR t IN SELECT unnest(ARRAY['"DecideQueues"'::regclass, '"OutboxEvents"'::regclass,
                               '"RateLimitBuckets"'::regclass])
            UNION ALL
           SELECT inhrelid::regclass FROM pg_inherits
            WHERE inhparent IN ('"TaskQueues"'::regclass, '"Timers"'::regclass)
  LOOP
    EXECUTE format('ALTER TABLE %s RESET (autovacuum_analyze_threshold)', t);
  END LOOP;
END
$$;
