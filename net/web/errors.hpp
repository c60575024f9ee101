#pragma once

// nodeflow's errors as HTTP answers: the status each code maps to, and Conductor's error
// body (`status`, `message`, `validationErrors` naming the field).

#include <string>

#include <boost/json/object.hpp>
#include <caf/error.hpp>

namespace nf::net::web {

/// invalid 400, not found 404, conflict / stale / lease lost 409, unavailable 503,
/// unsupported 501, anything else 500.
unsigned status_of(const caf::error& err);

/// The field an invalid request's `<path>: <reason>` message names ("" when none).
std::string field_of(const std::string& message);

boost::json::object error_body(unsigned status, const std::string& message,
                               const std::string& field);

} // namespace nf::net::web
