-- Undoes 0024_audit_events (the triggers and partitions go with the table; then the function).
DROP TABLE "AuditEvents";
DROP FUNCTION "AuditEvents_append_only"();
