#include "flow/task_type.hpp"

#include <array>

namespace nf::flow {

namespace {

constexpr std::array<std::string_view, 24> labels{
  "SIMPLE", "SWITCH", "FORK_JOIN", "JOIN", "FORK_JOIN_DYNAMIC", "DO_WHILE",
  "SUB_WORKFLOW", "WAIT", "HTTP", "SET_VARIABLE", "TERMINATE", "JSON_TRANSFORM",
  "INLINE", "LAMBDA", "JSON_JQ_TRANSFORM",
  "NOOP", "HUMAN", "DECISION", "EXCLUSIVE_JOIN", "DYNAMIC", "START_WORKFLOW", "EVENT",
  "LLM_STORE_EMBEDDINGS", "LLM_SEARCH_EMBEDDINGS",
};

}  // namespace

std::string_view to_string(task_type t) {
  return labels[static_cast<std::size_t>(t)];
}

std::optional<task_type> parse_task_type(std::string_view label) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == label)
      return static_cast<task_type>(i);
  return std::nullopt;
}

std::string_view task_type_labels() {
  return "SIMPLE, SWITCH, FORK_JOIN, JOIN, FORK_JOIN_DYNAMIC, DO_WHILE, SUB_WORKFLOW, "
         "WAIT, HTTP, SET_VARIABLE, TERMINATE, JSON_TRANSFORM, INLINE, LAMBDA, JSON_JQ_TRANSFORM, "
         "NOOP, HUMAN, DECISION, EXCLUSIVE_JOIN, DYNAMIC, START_WORKFLOW, EVENT, "
         "LLM_STORE_EMBEDDINGS, LLM_SEARCH_EMBEDDINGS";
}

bool is_inline(task_type t) {
  switch (t) {
    case task_type::switch_:
    case task_type::fork_join:
    case task_type::fork_join_dynamic:
    case task_type::set_variable:
    case task_type::terminate:
    case task_type::json_transform:
    case task_type::noop:
    case task_type::decision:
    case task_type::event:
      return true;
    default:
      return false;
  }
}

bool is_script(task_type t) {
  return t == task_type::inline_ || t == task_type::lambda || t == task_type::json_jq_transform;
}

bool is_vector(task_type t) {
  return t == task_type::llm_store_embeddings || t == task_type::llm_search_embeddings;
}

bool is_queued(task_type t) {
  return t == task_type::simple || t == task_type::http || is_script(t) || is_vector(t);
}

bool is_composite(task_type t) {
  return t == task_type::switch_ || t == task_type::fork_join || t == task_type::do_while
         || t == task_type::decision;
}

} // namespace nf::flow
