#pragma once

// A loopback port for a server a test starts (a node's door, which it must know before the
// node binds it). It is taken below the kernel's ephemeral range: a port picked from that
// range can be handed to an outgoing connection (a proxy's, a client's) between the probe and
// the server's bind, which then fails.

#include <cstdint>

namespace nf::test {

/// A loopback port nothing is bound to now, below the ephemeral range; throws
/// std::runtime_error when none is found.
uint16_t free_loopback_port();

} // namespace nf::test
