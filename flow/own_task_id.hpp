#pragma once

// `${CPEWF_TASK_ID}`, Conductor's name for the id of the task whose input it is: decide()
// resolves it with an id made for that task, which the row is then inserted with. A retry
// copies the input of the attempt before it, so the id found there becomes the retry's own.

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "flow/decision.hpp"

namespace nf::flow {

/// Replaces `previous` (the id of the attempt `input` was copied from) wherever a string of
/// `input` holds it with an id made by `ids`, and returns that id; returns "" and leaves
/// `input` as it was when no string holds it or there is no generator.
std::string carry_own_task_id(boost::json::object& input, std::string_view previous,
                              const task_id_source* ids);

} // namespace nf::flow
