#pragma once

// Where HTTP tasks and webhooks may connect (`egress.allow`, `egress.deny`). Workflow
// authors choose the URLs, so without a limit a node fetches whatever they name from
// inside its network: the cloud's metadata service (credentials), link-local devices.
// The check is on the addresses a name resolved to, at connect time, and the connection
// goes to an address that was checked: a name that resolves to a public address for the
// check and to 169.254.169.254 for the connection (DNS rebinding) gets nowhere.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nf::http {

/// The defaults: everywhere but link-local addresses and the cloud metadata services
/// (loopback and private ranges stay reachable: HTTP tasks often call services next to the
/// node; a deployment that must not reach them lists them in egress.deny).
inline constexpr const char* default_egress_allow = "*";
inline constexpr const char* default_egress_deny =
  "169.254.0.0/16, fe80::/10, fd00:ec2::254, metadata.google.internal";

class egress_policy {
public:
  /// Reads the two comma-separated lists: CIDR blocks (10.0.0.0/8, fd00::/8), single
  /// addresses, host names (api.example.com, *.example.com) and, in `allow`, "*" for
  /// every destination. An empty `allow` refuses every destination. nullopt with `error`
  /// naming the setting and the entry when one does not read.
  static std::optional<egress_policy> parse(const std::string& allow, const std::string& deny,
                                            std::string& error);

  /// default_egress_allow and default_egress_deny.
  static const egress_policy& defaults();

  /// Why `host` (as the URL names it) is refused before it is resolved: a denied name,
  /// or an address literal refused by `refuse_address`. nullopt when it may go on.
  std::optional<std::string> refuse_name(const std::string& host) const;

  /// Why a connection to `address` (text form, IPv4 or IPv6), which `host` resolved to,
  /// is refused; nullopt when allowed. `host` matters for allow entries naming hosts.
  std::optional<std::string> refuse_address(const std::string& host,
                                            const std::string& address) const;

private:
  struct block {
    std::array<uint8_t, 16> bytes{}; ///< IPv4 in the first 4
    bool v4 = false;
    int prefix = 0;
    std::string text;
  };
  struct rules {
    bool everything = false;
    std::vector<block> blocks;
    std::vector<std::string> names; ///< lower case; "*.x" matches any name under x
  };
  static std::optional<rules> read(const std::string& list, const char* setting,
                                   std::string& error);

  rules allow_;
  rules deny_;
};

} // namespace nf::http
