#define CAF_SUITE engine.egress
#include "caf/test/unit_test.hpp"

#include "config/settings.hpp"
#include "engine/http/egress.hpp"

using nf::http::egress_policy;

namespace {

// Why a name or an address is refused ("" when allowed), as a value the checks can hold.
std::string why(const egress_policy& p, const std::string& host) {
  return p.refuse_name(host).value_or("");
}

std::string why(const egress_policy& p, const std::string& host, const std::string& address) {
  return p.refuse_address(host, address).value_or("");
}

bool allowed(const egress_policy& p, const std::string& host, const std::string& address) {
  return !p.refuse_name(host) && !p.refuse_address(host, address);
}

egress_policy policy(const std::string& allow, const std::string& deny) {
  std::string error;
  auto p = egress_policy::parse(allow, deny, error);
  CAF_REQUIRE_EQUAL(error, "");
  return *p;
}

std::string parse_error(const std::string& allow, const std::string& deny) {
  std::string error;
  CAF_CHECK(!egress_policy::parse(allow, deny, error));
  return error;
}

} // namespace

CAF_TEST(the settings default to the policy the client uses when none is given) {
  auto settings = nf::config::values::defaults();
  CAF_CHECK_EQUAL(settings.get(nf::config::keys::egress_allow),
                  std::string{nf::http::default_egress_allow});
  CAF_CHECK_EQUAL(settings.get(nf::config::keys::egress_deny),
                  std::string{nf::http::default_egress_deny});
}

CAF_TEST(by default metadata services and link local addresses are refused) {
  const auto& d = egress_policy::defaults();
  CAF_CHECK_EQUAL(why(d, "169.254.169.254"),
                  "refused by egress.deny: 169.254.169.254 is in 169.254.0.0/16");
  CAF_CHECK(d.refuse_name("metadata.google.internal"));
  CAF_CHECK(d.refuse_name("Metadata.Google.Internal.")); // case and the root's dot
  CAF_CHECK(d.refuse_name("fd00:ec2::254"));
  CAF_CHECK(d.refuse_name("fe80::1"));
  // Whatever a name resolves to is checked too, IPv4-mapped IPv6 read as IPv4.
  CAF_CHECK_EQUAL(why(d, "evil.example", "::ffff:169.254.169.254"),
                  "refused by egress.deny: evil.example (::ffff:169.254.169.254) is in "
                  "169.254.0.0/16");
  CAF_CHECK(d.refuse_address("evil.example", "fe80::1%eth0"));
  CAF_CHECK(d.refuse_address("evil.example", "169.254.0.1"));
}

CAF_TEST(by default loopback private and public addresses are allowed) {
  const auto& d = egress_policy::defaults();
  CAF_CHECK(allowed(d, "localhost", "127.0.0.1"));
  CAF_CHECK(allowed(d, "localhost", "::1"));
  CAF_CHECK(allowed(d, "svc.internal", "10.1.2.3"));
  CAF_CHECK(allowed(d, "example.com", "93.184.215.14"));
  CAF_CHECK(allowed(d, "v6.example", "2001:db8::1"));
}

CAF_TEST(an allow list admits its blocks and names and refuses the rest) {
  auto p = policy("10.0.0.0/8, api.example.com, *.svc.local, 2001:db8::/32", "10.9.0.0/16");
  CAF_CHECK(allowed(p, "a", "10.1.1.1"));
  CAF_CHECK(allowed(p, "b", "2001:db8:1::5"));
  CAF_CHECK(allowed(p, "api.example.com", "93.184.215.14"));
  CAF_CHECK(allowed(p, "orders.svc.local", "192.168.1.1"));
  CAF_CHECK_EQUAL(why(p, "svc.local", "192.168.1.1"),
                  "refused: svc.local (192.168.1.1) is not in egress.allow");
  CAF_CHECK(!allowed(p, "c", "11.0.0.1"));
  // Deny wins over allow.
  CAF_CHECK_EQUAL(why(p, "d", "10.9.3.4"),
                  "refused by egress.deny: d (10.9.3.4) is in 10.9.0.0/16");
  // Nothing listed: nowhere.
  CAF_CHECK(!allowed(policy("", ""), "a", "10.1.1.1"));
}

CAF_TEST(a deny list may take loopback away) {
  auto p = policy("*", "127.0.0.0/8, ::1");
  CAF_CHECK(!p.refuse_name("localhost")); // a name: only its addresses tell
  CAF_CHECK(p.refuse_address("localhost", "127.0.0.1"));
  CAF_CHECK(p.refuse_address("localhost", "::1"));
  CAF_CHECK(p.refuse_name("127.1.2.3"));
}

CAF_TEST(an entry that does not read names the setting and the entry) {
  CAF_CHECK_EQUAL(parse_error("10.0.0.0/33", ""),
                  "egress.allow: expected a prefix length from 0 to 32, got \"10.0.0.0/33\"");
  CAF_CHECK_EQUAL(parse_error("*", "bad host!"),
                  "egress.deny: expected a CIDR block, an address or a host name, got \"bad host!\"");
  CAF_CHECK_EQUAL(parse_error("x/8", ""),
                  "egress.allow: expected an address before the prefix length (10.0.0.0/8, "
                  "fd00::/8), got \"x/8\"");
  CAF_CHECK(parse_error("*", "*").find("egress.deny: \"*\" would refuse every destination") == 0);
}
