#pragma once

// ${…} expressions inside inputParameters, outputParameters and cache keys.
// A string that is exactly one ${…} is replaced by the value with its type
// (a number stays a number, an object stays an object); ${…} embedded in longer
// text is substituted as text. A missing path yields null, never {}.
// `$${` writes a literal `${`: `$${x}` yields the text `${x}`, not evaluated.
//
// A path may end in one of Jayway JsonPath's functions, as Conductor allows:
// `${ref.output.items.length()}`, `${workflow.input.numbers.max()}`. Their
// meaning is Jayway's (path_function below); one that cannot be computed is an
// evaluation error, which fails the task whose input it is.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "flow/json_path.hpp"

namespace nf::flow {

/// The function a path may end with, and what it yields (Jayway JsonPath's semantics):
/// - length(): the size of an array or object; null for anything else (a string too).
/// - min(), max(), avg(), sum(): over the numbers of an array, as a double; elements that
///   are not numbers are skipped. An error when there is no number (not an array, or
///   no number in it).
/// - keys(): the names of an object, in order; null for anything else.
/// - first(), last(): an array's first or last element; an error on an empty array or
///   on anything else.
enum class path_function : unsigned char { none, length, min, max, avg, sum, keys, first, last };

/// The function named `name` (without "()"), or none when there is no such function.
path_function parse_path_function(std::string_view name);
const char* to_string(path_function f);

/// Applies `f` to `v` (the value the path denotes; null when missing). False with
/// `error` when Jayway would throw.
bool apply_path_function(path_function f, const boost::json::value& v,
                         boost::json::value& out, std::string& error);

/// One ${…}: `workflow.input.a[0]`, `workflow.variables.x`, `workflow.workflowId`,
/// `workflow.workflowType`, `workflow.version`, `ref.output.path`, `ref.input.path`,
/// `ref.<field>` for one of Conductor's task fields (task_field below), `secrets.NAME`.
///
/// `CPEWF_TASK_ID` (Conductor's name, one segment) is the id of the task whose input is
/// being resolved: a task's inputParameters are the only place it names anything.
///
/// `secrets.NAME` is deferred: flow never knows a secret's value, so resolving keeps the
/// text `${secrets.NAME}` as written, and the HTTP task's runner replaces it in memory
/// at dispatch (engine/secrets/). It is exactly two segments; a task whose reference
/// name is "secrets" is still reached as `secrets.output.x`.
/// The fields of a task an expression may read besides its input and output, as
/// Conductor's `${ref.status}`. Each names a value, with no fields below.
enum class task_field_name : unsigned char {
  status, reason_for_incompletion, retry_count, iteration, task_type, task_def_name,
  reference_task_name, scheduled_time, start_time, end_time, poll_count,
  workflow_instance_id, correlation_id,
};

/// The task field Conductor names `name` ("status", "reasonForIncompletion", "retryCount",
/// "iteration", "taskType", "taskDefName", "referenceTaskName", "scheduledTime",
/// "startTime", "endTime", "pollCount", "workflowInstanceId", "correlationId"), if any.
std::optional<task_field_name> parse_task_field(std::string_view name);

/// Conductor's name for the id of the task being scheduled, as `${CPEWF_TASK_ID}`.
inline constexpr std::string_view own_task_id_name = "CPEWF_TASK_ID";

struct reference {
  enum root_t : unsigned char {
    workflow_input, workflow_variables, workflow_id, workflow_type, workflow_version,
    workflow_correlation_id, task_input, task_output, task_field, secret, own_task_id,
  } root = workflow_input;
  std::string task_ref;  ///< for task_input / task_output / task_field; the secret's name
  task_field_name field = task_field_name::status;  ///< for task_field: which one
  json_path path;        ///< below the root
  path_function fn = path_function::none;  ///< applied to the value `path` denotes
};

/// Literal text and references, in order.
struct template_part {
  std::string literal;
  bool is_reference = false;
  reference ref;
};

struct parsed_template {
  std::vector<template_part> parts;
  /// Exactly one reference and nothing else: substitute with the value's type.
  bool whole_value() const { return parts.size() == 1 && parts[0].is_reference; }
};

/// Whether `v` is a string holding a ${…}: its value is known only once it resolves, so
/// checks of a literal skip it.
bool is_expression(const boost::json::value& v);

/// Parses one string. On failure returns false and sets `error`.
bool parse_template(std::string_view text, parsed_template& out, std::string& error);

/// What validation needs of a reference: its root and task, as a view into
/// the scanned text.
struct reference_view {
  reference::root_t root;
  std::string_view task_ref;  ///< empty for workflow roots
};

/// Checks the ${…} parts of one string and appends each reference to `refs`,
/// without building a parsed_template (validation runs over every string of a
/// definition). `scratch` is reused between calls. Returns false with `error`
/// at the first bad part; the references before it are appended.
bool scan_template(std::string_view text, json_path_view& scratch,
                   std::vector<reference_view>& refs, std::string& error);

/// What an expression can see while one task's input is resolved.
struct scope {
  std::string_view workflow_id;
  std::string_view workflow_type;
  std::int64_t workflow_version = 0;
  std::string_view correlation_id;  ///< empty: none (the expression is null)
  const boost::json::object* input = nullptr;
  const boost::json::object* variables = nullptr;
  /// The input (output == false) or output of task `ref` as visible from the
  /// task being resolved; nullptr when it has not run.
  std::function<const boost::json::object*(std::string_view ref, bool output)> task;
  /// Field `field` of task `ref` as visible from the task being resolved; null when it has
  /// not run.
  std::function<boost::json::value(std::string_view ref, task_field_name field)> task_field;
  /// The id of the task whose input this is (`${CPEWF_TASK_ID}`); unset elsewhere, where
  /// the expression is null.
  std::function<std::string_view()> own_task_id;
};

/// Whether `name` may name a secret: 1–128 of [A-Za-z0-9_-], not starting with '-'.
bool valid_secret_name(std::string_view name);

/// The value a reference denotes in `s`; null when missing. A secret reference denotes
/// its own text, `${secrets.NAME}`. False with `error` when its function fails.
bool evaluate(const reference& ref, const scope& s, boost::json::value& out,
              std::string& error);
/// The same, with null in place of a failed function.
boost::json::value evaluate(const reference& ref, const scope& s);

/// Replaces every ${…} in a template. Strings that fail to parse are kept as
/// written (validation reports them before a definition is accepted). A reference
/// whose function fails yields null, and the first such failure is written to
/// `error` (when given) as "<expression>: <why>".
boost::json::value resolve(const boost::json::value& tmpl, const scope& s,
                           std::string* error = nullptr);
boost::json::object resolve(const boost::json::object& tmpl, const scope& s,
                            std::string* error = nullptr);

} // namespace nf::flow
