#pragma once

// Meaning checks on definitions that were read without problems. Every problem
// is reported at once with its field path. Contract: a workflow definition
// that validates never makes decide() fail.

#include <string>
#include <string_view>

#include "flow/definitions.hpp"
#include "flow/problem.hpp"

namespace nf::flow {

/// Structure, references and per-type rules. `path` prefixes every problem
/// path ("" for a document root, "[2]" for the third entry of an array file).
problems validate(const workflow_def& def, const std::string& path = "");
problems validate(const task_def& def, const std::string& path = "");

/// The rules for one task produced at run time by a FORK_JOIN_DYNAMIC: the
/// per-type rules of validate(), and no composite types (SWITCH, FORK_JOIN,
/// FORK_JOIN_DYNAMIC, JOIN, DO_WHILE) nor TERMINATE.
problems validate_dynamic_task(const workflow_task& t, const std::string& path);

/// Result of reading + validating a definition from JSON text.
template <class Def>
struct loaded {
  Def def;
  problems errors;
  bool ok() const { return errors.empty(); }
};

/// parse_json + read_*_def + validate, as the API and `nodeflow validate` do.
loaded<workflow_def> load_workflow_def(std::string_view json_text);
loaded<task_def> load_task_def(std::string_view json_text);

} // namespace nf::flow
