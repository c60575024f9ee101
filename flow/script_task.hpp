#pragma once

// INLINE, LAMBDA and JSON_JQ_TRANSFORM: what a definition can be checked for before
// the script runs. Whether the program compiles is known only to the engine that
// runs it (engine/script/), which fails the task with the compiler's message.

#include <string>
#include <string_view>

#include "flow/definitions.hpp"
#include "flow/problem.hpp"

namespace nf::flow {

/// INLINE's accepted `evaluatorType` values, comma separated, for messages.
inline constexpr std::string_view inline_evaluators = "value-param, javascript, graaljs";

/// True for one of inline_evaluators.
bool is_inline_evaluator(std::string_view s);

/// INLINE needs `evaluatorType` (one of inline_evaluators) and a non-empty `expression`,
/// LAMBDA a non-empty `scriptExpression`, JSON_JQ_TRANSFORM a non-empty `queryExpression`
/// (each in inputParameters; a `${…}` value is checked only when the task runs).
void check_script_task(const workflow_task& t, const std::string& path, problems& out);

} // namespace nf::flow
