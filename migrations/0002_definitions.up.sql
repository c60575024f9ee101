-- 0002_definitions: "TaskDefinitions" and "WorkflowDefinitions" and their enums.
-- One explicit column per field the API accepts (seed 000, "Adding a migration" rule 5:
-- upserts name their columns; a field with no column is a field silently dropped).
-- Decisions where the seed is silent:
--   * Defaults follow Netflix Conductor's TaskDef/WorkflowDef defaults so Conductor SDK payloads
--     that omit a field mean the same thing here. Optional limits are NULL when unset.
--   * Counts/durations are integers with CHECK (>= 0); where 0 is meaningless (a
--     concurrency limit of 0, a backoff scale factor of 0) the CHECK is > 0 and NULL means "unset".
--   * "revision" counts updates of a task definition (1 on create, +1 per update) so caches can
--     tell stale copies apart; workflow definitions are already versioned by "version".
--   * JSONB shape CHECKs (array vs object) are cheap here (cold table) and catch a mis-encoded
--     write at the boundary instead of in the decider.
--   * Foreign keys to "Namespaces" only on these cold tables; hot tables carry none (see docs/schema.md).

CREATE TYPE task_definition_retry_logic AS ENUM ('FIXED', 'LINEAR_BACKOFF', 'EXPONENTIAL_BACKOFF');
CREATE TYPE task_definition_timeout_policy AS ENUM ('RETRY', 'TIME_OUT_WF', 'ALERT_ONLY');
CREATE TYPE workflow_definition_timeout_policy AS ENUM ('TIME_OUT_WF', 'ALERT_ONLY');

CREATE TABLE "TaskDefinitions" (
  "namespaceId"                 UUID        NOT NULL REFERENCES "Namespaces" ("id"),
  "name"                        TEXT        NOT NULL,
  "revision"                    BIGINT      NOT NULL DEFAULT 1 CHECK ("revision" >= 1),
  "description"                 TEXT,
  "retryCount"                  INTEGER     NOT NULL DEFAULT 3    CHECK ("retryCount" >= 0),
  "retryLogic"                  task_definition_retry_logic NOT NULL DEFAULT 'FIXED',
  "retryDelaySeconds"           INTEGER     NOT NULL DEFAULT 60   CHECK ("retryDelaySeconds" >= 0),
  "maxRetryDelaySeconds"        INTEGER              CHECK ("maxRetryDelaySeconds" >= 0),
  "backoffScaleFactor"          INTEGER     NOT NULL DEFAULT 1    CHECK ("backoffScaleFactor" > 0),
  "backoffJitterMs"             INTEGER     NOT NULL DEFAULT 0    CHECK ("backoffJitterMs" >= 0),
  "timeoutSeconds"              INTEGER     NOT NULL DEFAULT 0    CHECK ("timeoutSeconds" >= 0),
  "timeoutPolicy"               task_definition_timeout_policy NOT NULL DEFAULT 'TIME_OUT_WF',
  "responseTimeoutSeconds"      INTEGER     NOT NULL DEFAULT 3600 CHECK ("responseTimeoutSeconds" >= 0),
  "pollTimeoutSeconds"          INTEGER              CHECK ("pollTimeoutSeconds" >= 0),
  "totalTimeoutSeconds"         INTEGER              CHECK ("totalTimeoutSeconds" >= 0),
  "rateLimitPerFrequency"       INTEGER     NOT NULL DEFAULT 0    CHECK ("rateLimitPerFrequency" >= 0),
  "rateLimitFrequencyInSeconds" INTEGER     NOT NULL DEFAULT 1    CHECK ("rateLimitFrequencyInSeconds" > 0),
  "concurrentExecLimit"         INTEGER              CHECK ("concurrentExecLimit" > 0),
  "cacheTtlSeconds"             INTEGER              CHECK ("cacheTtlSeconds" >= 0),
  "cacheKey"                    TEXT,
  "inputKeys"                   TEXT[]      NOT NULL DEFAULT '{}',
  "outputKeys"                  TEXT[]      NOT NULL DEFAULT '{}',
  "inputTemplate"               JSONB       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof("inputTemplate") = 'object'),
  "ownerEmail"                  TEXT,
  "secretOutputFields"          TEXT[]      NOT NULL DEFAULT '{}',
  "queueName"                   TEXT,
  "createdAt"                   TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt"                   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "name")
);

CREATE TABLE "WorkflowDefinitions" (
  "namespaceId"      UUID        NOT NULL REFERENCES "Namespaces" ("id"),
  "name"             TEXT        NOT NULL,
  "version"          INTEGER     NOT NULL CHECK ("version" >= 1),
  "description"      TEXT,
  "tasks"            JSONB       NOT NULL CHECK (jsonb_typeof("tasks") = 'array'),
  "inputParameters"  JSONB       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof("inputParameters") = 'array'),
  "outputParameters" JSONB       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof("outputParameters") = 'object'),
  "variables"        JSONB       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof("variables") = 'object'),
  "timeoutSeconds"   INTEGER     NOT NULL DEFAULT 0 CHECK ("timeoutSeconds" >= 0),
  "timeoutPolicy"    workflow_definition_timeout_policy NOT NULL DEFAULT 'ALERT_ONLY',
  "failureWorkflow"  TEXT,
  "restartable"      BOOLEAN     NOT NULL DEFAULT true,
  "ownerEmail"       TEXT,
  "createdAt"        TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt"        TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "name", "version")
);
