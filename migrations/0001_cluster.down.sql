-- Undoes 0001_cluster.
DROP FUNCTION "rename_partition_indexes"(regclass);
DROP TABLE "Namespaces";
DROP TRIGGER "PartitionLeases_epoch_guard_trg" ON "PartitionLeases";
DROP TABLE "PartitionLeases";
DROP FUNCTION "PartitionLeases_epoch_guard"();
DROP TABLE "Nodes";
DROP TABLE "ClusterSettings";
