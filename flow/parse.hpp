#pragma once

// Reading definitions from untrusted JSON: shape and types only (validate.hpp
// checks meaning). Nothing here throws on bad input.

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "flow/definitions.hpp"
#include "flow/problem.hpp"

namespace nf::flow {

/// Parses JSON text with the error_code overload; a syntax error becomes one
/// problem at `path` (use "$" for a whole document). Returns false on error.
/// The tree is allocated from `out`'s memory resource.
bool parse_json(std::string_view text, boost::json::value& out, problems& errs,
                const std::string& path = "$");

/// Maps a JSON value onto a definition. Problems are appended with paths below
/// `path` ("" for a document root); fields that could not be read keep their
/// defaults, so the result is usable only when nothing was appended.
task_def read_task_def(const boost::json::value& v, const std::string& path, problems& errs);
workflow_def read_workflow_def(const boost::json::value& v, const std::string& path,
                               problems& errs);
workflow_task read_workflow_task(const boost::json::value& v, const std::string& path,
                                 problems& errs);

/// Whether a definition object is a workflow's rather than a task's: it has `tasks` or
/// another field only workflows have, so a workflow missing its tasks is still read (and
/// reported) as one. `nodeflow validate`, `defs put` and the node all decide by this.
bool looks_like_workflow(const boost::json::object& obj);

} // namespace nf::flow
