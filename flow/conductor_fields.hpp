#pragma once

// The fields of Conductor's WorkflowDef, WorkflowTask and TaskDef beyond the core
// language that parse.cpp reads: each is read into the definition when nodeflow
// honours it, kept verbatim when it is bookkeeping (createTime, ownerApp, …), accepted
// when empty (exports and SDKs write every field, null or empty when unset), and
// refused with the reason when set to something nodeflow cannot do.

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "flow/definitions.hpp"
#include "flow/json_read.hpp"

namespace nf::flow {

void read_conductor_task_fields(object_reader& r, workflow_task& t, problems& errs);
void read_conductor_workflow_fields(object_reader& r, workflow_def& d, problems& errs);
void read_conductor_task_def_fields(object_reader& r, task_def& d, problems& errs);
/// subWorkflowParam's fields beyond name and version.
void read_conductor_sub_workflow_fields(object_reader& r, problems& errs);

/// Why a task type of Conductor or Orkes that nodeflow does not run is refused
/// ("KAFKA_PUBLISH needs a Kafka broker, which nodeflow does not connect to"), or
/// nullopt for a label that names no such type.
std::optional<std::string> unsupported_task_type(std::string_view label);

/// A `cacheConfig.key` ("rate-${from}-${to}") with each `${name}` replaced by the task's
/// input `name` (a string as is, another value as JSON text, absent as nothing): Orkes
/// builds the key from the task's input only.
std::string cache_key_of(std::string_view key, const boost::json::object& input);

/// Writes the kept bookkeeping fields back beside a definition's own.
void write_metadata(const boost::json::object& metadata, boost::json::object& out);

/// Meaning checks of the fields above that need the whole task (its type).
void check_conductor_task_fields(const workflow_task& t, const std::string& path,
                                 problems& out);

} // namespace nf::flow
