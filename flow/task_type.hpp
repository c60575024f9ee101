#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nf::flow {

/// The task types of the workflow language (Conductor names).
enum class task_type : std::uint8_t {
  simple, switch_, fork_join, join, fork_join_dynamic, do_while, sub_workflow,
  wait, http, set_variable, terminate, json_transform,
  inline_, lambda, json_jq_transform,
  noop, human, decision, exclusive_join, dynamic, start_workflow, event,
  llm_store_embeddings, llm_search_embeddings,
};

/// "SIMPLE", "SWITCH", …
std::string_view to_string(task_type t);
std::optional<task_type> parse_task_type(std::string_view label);
/// The accepted labels, comma separated, for error messages.
std::string_view task_type_labels();

/// Executed by decide() itself in the evaluation that reaches it: such a task
/// is inserted already terminal and never enters a queue or a runner.
bool is_inline(task_type t);
/// INLINE, LAMBDA, JSON_JQ_TRANSFORM: scripts, which the node's script runner
/// evaluates in a sandbox process; decide() schedules them like HTTP tasks.
bool is_script(task_type t);
/// LLM_STORE_EMBEDDINGS, LLM_SEARCH_EMBEDDINGS: the node's vector runner stores or searches
/// the embeddings their input holds; decide() schedules them like HTTP tasks.
bool is_vector(task_type t);
/// Run by a worker or one of the node's runners: leased from a queue, completed by a report
/// (SIMPLE, HTTP, the scripts and the vector tasks).
bool is_queued(task_type t);
/// Holds other tasks (SWITCH cases, FORK branches, DO_WHILE body).
bool is_composite(task_type t);

} // namespace nf::flow
