#pragma once

// How client subcommands show answers to people (`--json` prints them raw).

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "proto/messages.hpp"

namespace nf::cmd {

/// `2026-11-30T07:10:00.123Z` (UTC) for ms since the epoch.
std::string format_time(int64_t ms);

/// An execution (get's JSON) as a summary with one line per task attempt.
void print_execution(const std::string& json, std::ostream& out);

/// One history event per line: seq, time, type, task, payload.
void print_event(const msg::event_view& e, std::ostream& out);

/// A search page as a table, then how to get the next page.
void print_search_page(const msg::search_page& page, std::ostream& out);

/// `status`: node, owned partitions, queues, pending decisions.
void print_status(const std::string& json, std::ostream& out);

/// `deadletters list`: one line per dead letter, then how to page on.
void print_dead_letters(const std::string& json, std::ostream& out);

/// `namespaces list`: one name a line.
void print_namespaces(const std::string& json, std::ostream& out);
/// Schedules (one or a list: name, state, cron, zone, workflow, next run), a delete's
/// answer, or the next times of a cron expression (one per line, UTC).
void print_schedules(const std::string& json, std::ostream& out);

/// A page of a task definition's executions (GET /api/metadata/taskdefs/{name}/executions).
void print_task_history(const std::string& json, std::ostream& out);

/// What `defs put` registered, each line led by where the definition came from:
/// `task_sources[i]` for the i-th task definition of the answer, `workflow_sources[i]`
/// for its i-th workflow definition.
void print_registered(const std::vector<std::string>& task_sources,
                      const std::vector<std::string>& workflow_sources, const std::string& json,
                      std::ostream& out);

/// True for the events that end a workflow (COMPLETED, FAILED, TIMED_OUT, TERMINATED).
bool is_final_event(const std::string& type);

} // namespace nf::cmd
