#pragma once

// LLM_STORE_EMBEDDINGS and LLM_SEARCH_EMBEDDINGS as system tasks: a leased task's input
// read, its documents stored in or searched from the workflow's namespace
// (engine/vectors/), and its result in Conductor's output shape. The embeddings come in the
// task's input (an earlier task computed them, referenced with ${…}); nodeflow calls no
// embedding model.

#include <string>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// The queue the decider enqueues the two task types on, which the vector runner polls.
inline const std::string vector_task_queue = "_system.vectors";

/// Why `vector_db` (the task's `vectorDB` input) cannot be used, or empty when it can: absent,
/// empty or "nodeflow" (the node's own "VectorDocuments"); every other is refused by name.
std::string vector_db_refusal(const std::string& vector_db);

/// Runs the task. COMPLETED: LLM_STORE_EMBEDDINGS `{"index","id","dimensions"}`;
/// LLM_SEARCH_EMBEDDINGS `{"result":[{"docId","score","metadata","text"}],"mode","distance"}`.
/// FAILED_WITH_TERMINAL_ERROR for input that can never work (a refused vectorDB, a missing or
/// malformed field, a wrong dimension, an unknown index), the reason naming the field; a
/// database error is returned as such (the runner reports it FAILED, which retries).
caf::expected<msg::task_result> run_vector_task(store::connection& conn,
                                                const msg::leased_task& task);

} // namespace nf::engine
