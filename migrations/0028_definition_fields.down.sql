-- 0028_definition_fields: drops the columns the up added.
ALTER TABLE "TaskDefinitions" DROP COLUMN "metadata";
ALTER TABLE "WorkflowDefinitions"
  DROP COLUMN "metadata",
  DROP COLUMN "workflowStatusListenerEnabled",
  DROP COLUMN "inputTemplate";
