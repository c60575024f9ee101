#include "net/cluster/middleman_peers.hpp"

#include <chrono>
#include <set>

#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <spdlog/logger.h>

#include "config/folder_logger.hpp"

namespace nf::net {

namespace {

constexpr auto connect_timeout = std::chrono::seconds{5};

} // namespace

void middleman_peers::with(caf::event_based_actor* self, const std::string& address, ready_fn f) {
  if (auto it = open_.find(address); it != open_.end()) {
    f(&it->second);
    return;
  }
  auto& waiting = opening_[address];
  waiting.push_back(std::move(f));
  if (waiting.size() > 1)
    return; // already opening
  auto colon = address.rfind(':');
  auto fail_all = [this, address](const std::string& why) {
    folder_logger("node")->warn("peer_unreachable address={} error=\"{}\"", address, why);
    auto fs = std::move(opening_[address]);
    opening_.erase(address);
    for (auto& g : fs)
      g(nullptr);
  };
  int port = colon == std::string::npos ? 0 : std::atoi(address.c_str() + colon + 1);
  if (port <= 0 || port > 65535) {
    fail_all("not HOST:PORT");
    return;
  }
  auto host = address.substr(0, colon);
  // The non-blocking form of caf::openssl::remote_actor / middleman().remote_actor.
  auto connector = tls_ ? self->system().openssl_manager().actor_handle()
                        : self->system().middleman().actor_handle();
  self
    ->request(connector, connect_timeout, caf::connect_atom_v, host, static_cast<uint16_t>(port))
    .then(
      [this, self, address, fail_all](const caf::node_id&, caf::strong_actor_ptr& ptr,
                                      const std::set<std::string>&) {
        if (!ptr) {
          fail_all("no actor published there");
          return;
        }
        auto peer = caf::actor_cast<caf::actor>(ptr);
        self->monitor(peer);
        auto& slot = open_[address] = peer;
        folder_logger("node")->info("peer_linked address={}", address);
        auto fs = std::move(opening_[address]);
        opening_.erase(address);
        for (auto& g : fs)
          g(&slot);
      },
      [fail_all](caf::error& err) { fail_all(caf::to_string(err)); });
}

const caf::actor* middleman_peers::open_or_start(caf::event_based_actor* self,
                                            const std::string& address) {
  if (auto it = open_.find(address); it != open_.end())
    return &it->second;
  if (opening_.count(address) == 0)
    with(self, address, [](const caf::actor*) {});
  return nullptr;
}

bool middleman_peers::forget(const caf::actor_addr& who) {
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (it->second.address() != who)
      continue;
    folder_logger("node")->info("peer_down address={}", it->first);
    open_.erase(it);
    return true;
  }
  return false;
}

} // namespace nf::net
