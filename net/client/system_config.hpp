#pragma once

#include <memory>

#include <caf/actor_system_config.hpp>

namespace nf::net {

/// The CAF configuration every nodeflow process uses (nodes, clients, tests):
/// the nodeflow type-id block and the middleman loaded, the `sharing`
/// scheduler (remote request/response ~60–100 µs instead of ~0.3 ms with work
/// stealing, STACK.md), and middleman heartbeats on so a dead peer is noticed.
class system_config : public caf::actor_system_config {
public:
  system_config();
};

} // namespace nf::net
