#include "proto/errors.hpp"

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace nf {

namespace {
constexpr caf::atom_value category = caf::atom("nf_store");
}

const char* to_string(errc x) {
  switch (x) {
    case errc::retry_tx: return "retry_tx";
    case errc::conn_broken: return "conn_broken";
    case errc::in_doubt: return "in_doubt";
    case errc::conflict: return "conflict";
    case errc::stale: return "stale";
    case errc::not_found: return "not found";
    case errc::invalid: return "invalid";
    case errc::lease_lost: return "lease lost";
    case errc::unsupported: return "unsupported";
    case errc::internal: return "internal";
    case errc::unavailable: return "unavailable";
    case errc::unauthenticated: return "unauthenticated";
    case errc::forbidden: return "forbidden";
  }
  return "internal";
}

caf::error make_error(errc code, std::string message) {
  return caf::error{static_cast<uint8_t>(code), category,
                    caf::make_message(std::move(message))};
}

bool is_nodeflow_error(const caf::error& err) {
  return err && err.category() == category;
}

errc code_of(const caf::error& err) {
  if (!is_nodeflow_error(err))
    return errc::internal;
  return static_cast<errc>(err.code());
}

caf::error make_error(errc code, std::string message, std::string sqlstate) {
  return caf::error{static_cast<uint8_t>(code), category,
                    caf::make_message(std::move(message), std::move(sqlstate))};
}

std::string message_of(const caf::error& err) {
  const auto& ctx = err.context();
  if (ctx.size() >= 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return caf::to_string(err);
}

std::string sqlstate_of(const caf::error& err) {
  const auto& ctx = err.context();
  if (ctx.size() == 2 && ctx.match_element<std::string>(1))
    return ctx.get_as<std::string>(1);
  return {};
}

} // namespace nf
