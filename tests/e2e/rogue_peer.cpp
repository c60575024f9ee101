// A CAF process of its own (its own node id, as another machine would have) that tries to
// obtain the actor published at 127.0.0.1:PORT, and says what it got:
//   rogue_peer tls PORT CAFILE CERT KEY   through CAF's OpenSSL module ("-": setting unset)
//   rogue_peer plain PORT                 through the plain middleman
// Prints `obtained` (exit 0) or `refused ERROR` (exit 1).

#include <chrono>
#include <iostream>
#include <set>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>

#include "net/client/system_config.hpp"

int main(int argc, char** argv) {
  std::string mode = argc > 2 ? argv[1] : "";
  if (!((mode == "tls" && argc == 6) || (mode == "plain" && argc == 3))) {
    std::cerr << "usage: rogue_peer tls PORT CAFILE CERT KEY | plain PORT\n";
    return 2;
  }
  auto port = static_cast<uint16_t>(std::stoi(argv[2]));
  nf::net::system_config cfg;
  if (mode == "tls") {
    auto arg = [&](int i) { return std::string{argv[i]} == "-" ? std::string{} : argv[i]; };
    cfg.openssl_cafile = arg(3);
    cfg.openssl_certificate = arg(4);
    cfg.openssl_key = arg(5);
    cfg.load<caf::openssl::manager>();
  }
  caf::actor_system sys{cfg};
  auto mm = mode == "tls" ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  bool obtained = false;
  std::string error = "no actor published";
  caf::scoped_actor self{sys};
  // What caf::openssl::remote_actor and middleman().remote_actor send, with a deadline.
  self->request(mm, std::chrono::seconds(10), caf::connect_atom_v, std::string{"127.0.0.1"}, port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        obtained = ptr != nullptr;
      },
      [&](caf::error& err) { error = caf::to_string(err); });
  if (obtained)
    std::cout << "obtained" << std::endl;
  else
    std::cout << "refused " << error << std::endl;
  return obtained ? 0 : 1;
}
