#pragma once

// The result a system task reports for its leased task, shared by the HTTP and script tasks.

#include <string>

#include <boost/json/object.hpp>

#include "proto/messages.hpp"

namespace nf::engine {

/// `task`'s result: its identity and lease, `status`, `output` written as JSON, `reason`.
msg::task_result system_task_result(const msg::leased_task& task, std::string status,
                                    const boost::json::object& output, std::string reason);

} // namespace nf::engine
