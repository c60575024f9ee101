#pragma once

// A task definition's `secretOutputFields`: the top-level output keys whose values are
// replaced by "***" before the output is stored anywhere (the completion's write does the
// same in SQL, store/task_transitions.cpp). Downstream references see the redaction.

#include <string>
#include <vector>

#include <boost/json/object.hpp>

namespace nf::flow {

inline constexpr const char* redacted_value = "***";

/// Replaces the value of each of `fields` present in `output` by "***".
void redact_fields(boost::json::object& output, const std::vector<std::string>& fields);

} // namespace nf::flow
