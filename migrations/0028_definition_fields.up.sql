-- 0028_definition_fields: what Conductor definitions carry beyond the columns nodeflow had.
-- Decisions:
--   * "inputTemplate" (workflow): defaults under a start's input, merged by the start itself
--     (workflows.start_batch), so every way of starting a workflow gets them.
--   * "workflowStatusListenerEnabled" (workflow): decide() publishes the end of each run to
--     the outbox when set.
--   * "metadata" (both): Conductor's bookkeeping fields (createTime, ownerApp, accessPolicy,
--     tags, …) as registered, returned by the metadata API and changing nothing else. One
--     object, not a column each: nodeflow never reads them, only hands them back.
ALTER TABLE "WorkflowDefinitions"
  ADD COLUMN "inputTemplate" JSONB NOT NULL DEFAULT '{}'::jsonb
    CHECK (jsonb_typeof("inputTemplate") = 'object'),
  ADD COLUMN "workflowStatusListenerEnabled" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}'::jsonb
    CHECK (jsonb_typeof("metadata") = 'object');

ALTER TABLE "TaskDefinitions"
  ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}'::jsonb
    CHECK (jsonb_typeof("metadata") = 'object');
