// nodeflow-fault-proxy: a loopback TCP proxy whose links break on command, for
// nodeflow's fault harness (tests/fault/README.md).
//
//   nodeflow-fault-proxy --control 127.0.0.1:0 [--link NAME=HOST:PORT[@LISTEN_PORT]]...
//   nodeflow-fault-proxy ctl 127.0.0.1:PORT COMMAND [WORDS...]

#include <cstdio>
#include <string>
#include <vector>

#include "control.hpp"
#include "modes.hpp"
#include "proxy.hpp"

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "nodeflow-fault-proxy: %s\n", why.c_str());
  std::fprintf(stderr, "usage: nodeflow-fault-proxy --control HOST:PORT "
                       "[--link NAME=TARGET_HOST:PORT[@LISTEN_PORT]]...\n"
                       "       nodeflow-fault-proxy ctl HOST:PORT COMMAND [WORDS...]\n");
  return 2;
}

struct link_flag {
  std::string name;
  nf::fault::endpoint target;
  std::uint16_t listen_port = 0;
};

// NAME=TARGET_HOST:PORT[@LISTEN_PORT]
bool parse_link(const std::string& text, link_flag& out, std::string& why) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    why = "--link '" + text + "' is not NAME=TARGET_HOST:PORT[@LISTEN_PORT]";
    return false;
  }
  out.name = text.substr(0, eq);
  auto target = text.substr(eq + 1);
  if (auto at = target.rfind('@'); at != std::string::npos) {
    auto port = nf::fault::parse_count(target.substr(at + 1), 65535);
    if (!port) {
      why = "--link " + out.name + ": LISTEN_PORT '" + target.substr(at + 1)
            + "' is not a number from 0 to 65535";
      return false;
    }
    out.listen_port = static_cast<std::uint16_t>(*port);
    target.resize(at);
  }
  auto e = nf::fault::parse_endpoint(target, why);
  if (!e) {
    why = "--link " + out.name + ": " + why;
    return false;
  }
  out.target = *e;
  return true;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "ctl")
    return nf::fault::run_ctl({args.begin() + 1, args.end()});
  std::string control;
  std::vector<link_flag> links;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a != "--control" && a != "--link")
      return fail("unknown argument '" + a + "'");
    if (i + 1 >= args.size())
      return fail(a + " needs a value");
    const auto& value = args[++i];
    if (a == "--control") {
      if (!control.empty())
        return fail("--control is given twice");
      control = value;
      continue;
    }
    link_flag l;
    std::string why;
    if (!parse_link(value, l, why))
      return fail(why);
    links.push_back(l);
  }
  if (control.empty())
    return fail("--control HOST:PORT is required");
  std::string why;
  auto at = nf::fault::parse_endpoint(control, why);
  if (!at)
    return fail("--control: " + why);
  nf::fault::proxy p;
  if (!p.open_control(*at, why))
    return fail("--control: " + why);
  std::printf("control %s\n", nf::fault::to_string(p.control()).c_str());
  for (auto& l : links) {
    auto port = p.add_link(l.name, l.target, l.listen_port, why);
    if (!port)
      return fail("--link " + l.name + ": " + why);
    std::printf("link %s 127.0.0.1:%u\n", l.name.c_str(), unsigned{*port});
  }
  std::printf("ready\n");
  std::fflush(stdout);
  p.run();
  return 0;
}
