#pragma once

// The HTTP system task (Conductor's `http_request` input), without I/O: reading
// a task's input into a request, and turning the answer into the task's result.

#include <chrono>
#include <string>
#include <variant>

#include "engine/http/request.hpp"
#include "proto/messages.hpp"

namespace nf::engine {

/// The queue the decider enqueues HTTP tasks on, which the system-task runner polls.
inline const std::string http_task_queue = "_system.http";

/// Reads `{"http_request": {uri, method, headers, body, accept, contentType,
/// connectionTimeOut, readTimeOut}}` (or those fields at the top level). On bad
/// input the string names the field and what was expected:
/// `http_request.method: expected one of GET, POST, …, got "FETCH"`.
std::variant<http::request, std::string>
read_http_task(const std::string& input_json, std::chrono::milliseconds default_timeout);

/// Shortens `req`'s timeouts so it ends `margin` before the lease does (at
/// `lease_expires_at_ms`, ms since the epoch, with `now_ms` on the same clock): a
/// result reported after the lease expired is fenced off (I5) and the attempt wasted.
void fit_into_lease(http::request& req, int64_t lease_expires_at_ms, int64_t now_ms,
                    std::chrono::milliseconds margin);

/// The task result: COMPLETED with {"response": {statusCode, reasonPhrase,
/// headers, body}} on a 2xx (the body parsed when it is JSON, else text);
/// FAILED (retryable) on another status or a network error; FAILED_WITH_TERMINAL_ERROR with
/// {"error"} when the egress policy refused the destination.
msg::task_result http_task_result(const msg::leased_task& task, const http::outcome& out);

/// FAILED (retryable) with `reason`, before any request was made.
msg::task_result http_task_failed(const msg::leased_task& task, const std::string& reason);

/// FAILED_WITH_TERMINAL_ERROR for input that can never succeed.
msg::task_result http_task_rejected(const msg::leased_task& task, const std::string& problem);

} // namespace nf::engine
