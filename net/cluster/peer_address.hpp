#pragma once

// A node's address as nodes advertise it ("Nodes"."address", node.advertise) and dial it:
// HOST:PORT. One parse for both, so a value `serve` accepts is one its peers can dial.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.hpp"

namespace nf::net {

struct host_port {
  std::string host;
  uint16_t port = 0;
};

/// `address` as HOST:PORT: a host without blanks or control characters and a port
/// 1–65535. nullopt, with `why` (if given) saying what is wrong, otherwise.
std::optional<host_port> parse_host_port(std::string_view address, std::string* why = nullptr);

/// Adds an error naming node.advertise when it is set and not HOST:PORT.
void check_advertise(const config::values& settings, std::vector<std::string>& errors);

} // namespace nf::net
