#pragma once

// INLINE, LAMBDA and JSON_JQ_TRANSFORM as system tasks, without I/O: reading a
// leased task's input into a sandbox request (engine/script/), and turning the
// sandbox's answer into the task's result with Conductor's output shape.

#include <string>
#include <variant>

#include "engine/script/protocol.hpp"
#include "proto/messages.hpp"

namespace nf::engine {

/// The queue the decider enqueues script tasks on, which the script runner polls.
inline const std::string script_task_queue = "_system.script";

/// The program a leased script task runs, or its result at once: INLINE's value-param
/// needs no program ({"result": the input parameter named by `expression`}), and input
/// that can never run (no `expression`, an unknown `evaluatorType`) fails for good.
std::variant<script::request, msg::task_result> read_script_task(const msg::leased_task& task);

/// COMPLETED with {"result"} (INLINE, LAMBDA) or {"result", "resultList"} (JSON_JQ_TRANSFORM:
/// the first output and all of them); otherwise FAILED with {"error"} and a reason naming
/// the type: "INLINE: script ran past its time limit of 1000 ms".
msg::task_result script_task_result(const msg::leased_task& task, const script::answer& a);

} // namespace nf::engine
