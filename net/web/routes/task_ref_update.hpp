#pragma once

// The update of a WAIT or HUMAN task by its workflow and reference name, shared by the routes
// that name the task (task_by_ref.cpp) and those that find it (task_signal.cpp).

#include <functional>
#include <optional>
#include <string>

#include "net/web/exchange.hpp"
#include "net/web/gateway.hpp"
#include "net/web/json_body.hpp"
#include "proto/messages.hpp"

namespace nf::net::web {

/// An update of `status` with the body as the task's output (a JSON object; an empty body is
/// {}) and X-Request-Id attached; nullopt with the 400 answered.
std::optional<msg::task_ref_update> read_task_update(const exchange_ptr& ex,
                                                     const json_limits& lim,
                                                     const std::string& status);

/// Sends `u` (its request id already attached): `done(task id)` once the engine accepted it,
/// or the refusal answered on `ex`. A loop's iteration named as Conductor shows it
/// ("wait__2") goes to the task of that reference name when it is the latest iteration.
void send_task_ref_update(gateway* api, const exchange_ptr& ex, msg::task_ref_update u,
                          std::function<void(const std::string&)> done);

} // namespace nf::net::web
