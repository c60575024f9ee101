-- 0011_outbox_by_shard: the deliverable index leads with "shard".
-- Decision where the seed and the design meet: the seed's index is ("nextAttemptAt", "id"),
-- written for one relay; DESIGN §5 runs a relay per partition and wants each claim to be an
-- index range scan on its own partition. With the seed's index every relay walked the due
-- events of all partitions and filtered out the others' (W2 on 16 partitions: ~890 buffers per
-- claim, the largest Postgres cost per task). Leading with "shard" makes a relay's claim a range
-- scan that stops after its batch; the predicate is unchanged, so published and dead-lettered
-- rows still leave the index.
DROP INDEX "OutboxEvents_deliverable_idx";

CREATE INDEX "OutboxEvents_deliverable_idx"
  ON "OutboxEvents" ("shard", "nextAttemptAt", "id")
  WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL;
