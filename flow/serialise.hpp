#pragma once

// Definitions back to Conductor-style JSON. Every field is written, so that
// read(serialise(x)) == x for every definition read without problems.

#include <boost/json/value.hpp>

#include "flow/definitions.hpp"

namespace nf::flow {

boost::json::value to_json(const task_def& d);
boost::json::value to_json(const workflow_task& t);
boost::json::value to_json(const workflow_def& d);

} // namespace nf::flow
