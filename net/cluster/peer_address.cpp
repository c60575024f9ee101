#include "net/cluster/peer_address.hpp"

#include <charconv>

namespace nf::net {

std::optional<host_port> parse_host_port(std::string_view address, std::string* why) {
  auto fail = [why](std::string text) -> std::optional<host_port> {
    if (why)
      *why = std::move(text);
    return std::nullopt;
  };
  auto colon = address.rfind(':');
  if (colon == std::string_view::npos)
    return fail("no :PORT");
  auto host = address.substr(0, colon);
  auto digits = address.substr(colon + 1);
  if (host.empty())
    return fail("no host before the port");
  for (unsigned char c : host)
    if (c <= ' ' || c == 0x7f)
      return fail("a blank or control character in the host");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || port == 0
      || port > 65535)
    return fail("the port is not a number 1-65535");
  return host_port{std::string{host}, static_cast<uint16_t>(port)};
}

void check_advertise(const config::values& settings, std::vector<std::string>& errors) {
  const auto& advertise = settings.get(config::keys::node_advertise);
  std::string why;
  if (!advertise.empty() && !parse_host_port(advertise, &why))
    errors.push_back(std::string{config::keys::node_advertise.name}
                     + ": expected HOST:PORT, the address other nodes dial, got \"" + advertise
                     + "\" (" + why + ")");
}

} // namespace nf::net
