-- 0031_payloads: drops the payload references and "Payloads". Offloaded values are lost.
ALTER TABLE "WorkflowEvents" DROP COLUMN "payloadId";
ALTER TABLE "WorkflowExecutions" DROP COLUMN "outputPayloadId";
ALTER TABLE "TaskExecutions" DROP COLUMN "inputPayloadId", DROP COLUMN "outputPayloadId";
DROP TABLE "Payloads";
