-- Undoes 0020_definition_stamps: the triggers, their function and the stamps go (the decide
-- flush of the engine before it counts the definitions again).
DROP TRIGGER "WorkflowDefinitions_truncate_stamp_trg" ON "WorkflowDefinitions";
DROP TRIGGER "WorkflowDefinitions_stamp_trg" ON "WorkflowDefinitions";
DROP TRIGGER "TaskDefinitions_truncate_stamp_trg" ON "TaskDefinitions";
DROP TRIGGER "TaskDefinitions_stamp_trg" ON "TaskDefinitions";
DROP FUNCTION "DefinitionStamps_bump"();
DROP TABLE "DefinitionStamps";
