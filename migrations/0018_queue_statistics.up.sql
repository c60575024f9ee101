-- 0018_queue_statistics: autovacuum analyses the queue tables after a million changed rows,
-- not after fifty plus 10%.
-- Decision where the seed is silent (it tunes their vacuum, which stays as it is): a queue
-- row lives for seconds, so a queue's statistics describe one moment of it, and every
-- statement on these tables is written so that its plan does not depend on them (index
-- probes by key, the partial dequeue and due indexes). Analysed in every autovacuum round
-- (each 10 s under load), they cost what the round costs the engine: ANALYZE samples the
-- table holding a snapshot, and its statistics update makes every backend plan again every
-- statement naming the table. W1lat with autoanalyze held off, alternated: p99 88 / 75 ms
-- against 124 / 137 (bench/README.md, round 15). "Timers" partitions made later
-- (store/partitions.cpp) get the same setting.
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
    EXECUTE format('ALTER TABLE %s SET (autovacuum_analyze_threshold = 1000000)', t);
  END LOOP;
END
$$;
