#pragma once

// Workflow schedules as the client protocol and Conductor's scheduler REST see them
// (msg::schedule_request, checked by the api): save (create or replace), get, list, delete,
// pause, resume, and the next times of a cron expression. A schedule's JSON is Conductor's
// WorkflowSchedule: name, cronExpression, zoneId, startWorkflowRequest, paused, pausedReason,
// runCatchupScheduleInstances, scheduleStartTime, scheduleEndTime, description, createdBy,
// updatedBy, createTime, updatedTime, plus nodeflow's nextRunTime, lastRunTime and
// lastWorkflowId. Changes are audited in their transaction (`schedules.save`,
// `schedules.delete`, `schedules.pause`, `schedules.resume`).

#include <string>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine::schedules {

caf::expected<std::string> handle(store::connection& conn, const msg::schedule_request& r);

} // namespace nf::engine::schedules
