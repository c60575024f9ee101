-- 0025_secrets: undoes the up.
ALTER TABLE "WebhookSinks" DROP COLUMN "signingSecret";
DROP TABLE "Secrets";
