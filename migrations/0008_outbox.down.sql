-- Undoes 0008_outbox.
DROP TABLE "WebhookSinks";
DROP TABLE "OutboxEvents";
