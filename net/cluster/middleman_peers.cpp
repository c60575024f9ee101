#include "net/cluster/middleman_peers.hpp"

#include <chrono>
#include <set>

#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <spdlog/logger.h>

#include "config/folder_logger.hpp"
#include "net/cluster/peer_address.hpp"
#include "proto/type_ids.hpp"

namespace nf::net {

namespace {

constexpr auto connect_timeout = std::chrono::seconds{5};
// How soon a link this node opens is tried again after it failed or went down.
constexpr auto reopen_delay = std::chrono::seconds{1};

} // namespace

void middleman_peers::settle(const std::string& address, const caf::actor* peer) {
  auto fs = std::move(opening_[address]);
  opening_.erase(address);
  awaited_since_.erase(address);
  for (auto& g : fs)
    g(peer);
}

void middleman_peers::with(caf::event_based_actor* self, const std::string& address, ready_fn f) {
  if (auto it = open_.find(address); it != open_.end()) {
    f(&it->second);
    return;
  }
  auto& waiting = opening_[address];
  waiting.push_back(std::move(f));
  if (!dials(address)) {
    // The peer opens this link; requests wait for it up to connect_timeout.
    auto now = std::chrono::steady_clock::now();
    auto [since, fresh] = awaited_since_.emplace(address, now);
    if (!fresh && now - since->second > connect_timeout) {
      folder_logger("node")->warn("peer_unreachable address={} error=\"it has not linked to "
                                  "this node\"",
                                  address);
      settle(address, nullptr);
    }
    return;
  }
  if (waiting.size() > 1)
    return; // already opening
  dial(self, address);
}

void middleman_peers::open_again_soon(caf::event_based_actor* self) {
  // One retry pending at a time: each failed link would otherwise add its own, and every
  // retry dials every link still down, so the retries would multiply.
  if (reopen_pending_)
    return;
  reopen_pending_ = true;
  self->delayed_send(self, reopen_delay, peer_atom_v);
}

void middleman_peers::reopen(caf::event_based_actor* self,
                             const std::vector<std::string>& owners) {
  reopen_pending_ = false;
  owners_known(self, owners);
}

void middleman_peers::dial(caf::event_based_actor* self, const std::string& address) {
  auto fail_all = [this, self, address](const std::string& why) {
    folder_logger("node")->warn("peer_unreachable address={} error=\"{}\"", address, why);
    settle(address, nullptr);
    open_again_soon(self);
  };
  std::string why;
  auto parsed = parse_host_port(address, &why);
  if (!parsed) {
    fail_all("not HOST:PORT: " + why);
    return;
  }
  const auto& host = parsed->host;
  auto port = parsed->port;
  // The non-blocking form of caf::openssl::remote_actor / middleman().remote_actor.
  auto connector = tls_ ? self->system().openssl_manager().actor_handle()
                        : self->system().middleman().actor_handle();
  self
    ->request(connector, connect_timeout, caf::connect_atom_v, host, port)
    .then(
      [this, self, address, fail_all](const caf::node_id&, caf::strong_actor_ptr& ptr,
                                      const std::set<std::string>&) {
        if (!ptr) {
          fail_all("no actor published there");
          return;
        }
        auto peer = caf::actor_cast<caf::actor>(ptr);
        // Introduces this node's api over the link, so the peer never dials back.
        if (api_)
          self->send(peer, forward_atom_v, peer_atom_v, self_address_, api_, credential_);
        self->monitor(peer);
        auto& slot = open_[address] = peer;
        folder_logger("node")->info("peer_linked address={}", address);
        settle(address, &slot);
      },
      [fail_all](caf::error& err) { fail_all(caf::to_string(err)); });
}

void middleman_peers::owners_known(caf::event_based_actor* self,
                                   const std::vector<std::string>& owners) {
  // `owners` names a node once per partition it owns: each is dialed once.
  std::set<std::string> distinct(owners.begin(), owners.end());
  for (const auto& a : distinct)
    if (!a.empty() && a != self_address_ && dials(a))
      open_or_start(self, a);
}

void middleman_peers::adopt(caf::event_based_actor* self, const std::string& address,
                            caf::actor peer) {
  if (!peer || address == self_address_ || dials(address))
    return; // this node opens that link itself
  if (auto it = open_.find(address); it != open_.end() && it->second == peer)
    return;
  self->monitor(peer);
  auto& slot = open_[address] = std::move(peer);
  folder_logger("node")->info("peer_linked address={} (it opened the link)", address);
  settle(address, &slot);
}

const caf::actor* middleman_peers::open_or_start(caf::event_based_actor* self,
                                                 const std::string& address) {
  if (auto it = open_.find(address); it != open_.end())
    return &it->second;
  if (opening_.count(address) == 0 && dials(address))
    with(self, address, [](const caf::actor*) {});
  return nullptr;
}

bool middleman_peers::forget(caf::event_based_actor* self, const caf::actor_addr& who) {
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (it->second.address() != who)
      continue;
    folder_logger("node")->info("peer_down address={}", it->first);
    // The peer waits for this node to open their link again.
    if (dials(it->first))
      open_again_soon(self);
    open_.erase(it);
    return true;
  }
  return false;
}

} // namespace nf::net
