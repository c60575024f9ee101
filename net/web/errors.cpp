#include "net/web/errors.hpp"

#include "proto/errors.hpp"

namespace nf::net::web {

unsigned status_of(const caf::error& err) {
  if (!nf::is_nodeflow_error(err))
    return 503; // CAF's own: a timeout or an unreachable actor
  switch (nf::code_of(err)) {
    case errc::invalid:
      return 400;
    case errc::not_found:
      return 404;
    case errc::conflict:
    case errc::stale:
    case errc::lease_lost:
      return 409;
    case errc::unavailable:
    case errc::conn_broken:
    case errc::retry_tx:
    case errc::in_doubt:
      return 503;
    case errc::unsupported:
      return 501;
    case errc::unauthenticated:
      return 401;
    case errc::forbidden:
      return 403;
    case errc::internal:
      break;
  }
  return 500;
}

std::string field_of(const std::string& message) {
  // Messages read "tasks[3].name: expected …" (net/api/checks.cpp): the field is the part
  // before the first ": " when it looks like a path (no spaces).
  auto colon = message.find(": ");
  if (colon == std::string::npos || colon == 0)
    return {};
  auto field = message.substr(0, colon);
  if (field.find(' ') != std::string::npos)
    return {};
  return field;
}

boost::json::object error_body(unsigned status, const std::string& message,
                               const std::string& field) {
  boost::json::object o;
  o["status"] = status;
  o["message"] = message;
  o["retryable"] = status == 429 || status == 503;
  boost::json::array problems;
  if (!field.empty())
    problems.push_back(boost::json::object{{"path", field}, {"message", message}});
  o["validationErrors"] = std::move(problems);
  return o;
}

} // namespace nf::net::web
