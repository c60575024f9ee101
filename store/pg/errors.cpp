#include "store/pg/errors.hpp"

#include <cstring>

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace nf::store {

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
  }
  return "internal";
}

caf::error make_error(errc code, std::string message) {
  return caf::error{static_cast<uint8_t>(code), category,
                    caf::make_message(std::move(message))};
}

errc code_of(const caf::error& err) {
  if (!err || err.category() != category)
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

errc classify_sqlstate(const char* sqlstate) {
  if (sqlstate == nullptr || std::strlen(sqlstate) != 5)
    return errc::conn_broken; // no SQLSTATE at all: libpq lost the server
  std::string s{sqlstate};
  if (s == "40001" || s == "40P01")
    return errc::retry_tx;
  if (s == "23505")
    return errc::conflict;
  if (s == "NF001")
    return errc::stale; // a compare-and-set's own check ("fail_if", migration 0018)
  if (s.compare(0, 2, "08") == 0 || s == "57P01" || s == "57P02" || s == "57P03")
    return errc::conn_broken; // connection exceptions, admin/crash shutdown
  if (s.compare(0, 2, "22") == 0 || s == "23502" || s == "23503" || s == "23514")
    return errc::invalid; // data exceptions and constraint violations name bad input
  return errc::internal;
}

} // namespace nf::store
