#pragma once

// The sandbox process's side: `nodeflow sandbox`, which the node starts itself
// (pool.hpp) with an empty environment, its stdin and stdout one socket to the
// node and stderr /dev/null. It answers one request frame after another
// (protocol.hpp) until the node closes the socket or kills it.

namespace nf::engine::script {

/// Hardens the process (no core files, no file writes, no new privileges, a CPU limit
/// per request), then serves requests on fd 0/1 until end of file. Returns the exit status.
int sandbox_main();

} // namespace nf::engine::script
