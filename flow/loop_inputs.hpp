#pragma once

// A DO_WHILE's two input knobs besides loopCondition, as Conductor names them:
// `items`, the list the loop runs over once per item (the task's top-level
// field, as Conductor OSS documents it, or `inputParameters.items`, as Orkes
// does), and `inputParameters.keepLastN`, how many iterations the loop's output
// keeps. Both are read from the loop's resolved input, where decide() puts the
// resolved list under "items" when the loop starts.

#include <cstdint>
#include <string>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "flow/definitions.hpp"
#include "flow/problem.hpp"

namespace nf::flow {

/// Whether the loop runs once per item of a list.
bool iterates_items(const workflow_task& t);

/// The list in a loop's resolved input; null with `error` set when it is not one.
const boost::json::array* loop_items(const boost::json::object& input, std::string& error);

/// keepLastN from a loop's resolved input: 0 when absent (keep every
/// iteration); -1 with `error` set when it is not an integer >= 1.
std::int64_t keep_last_n(const boost::json::object& input, std::string& error);

/// Definition-time checks of both, where their values are literals.
void check_loop_inputs(const workflow_task& t, const std::string& path, problems& out);

} // namespace nf::flow
