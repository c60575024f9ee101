#pragma once

// The client door's guard. CAF 0.17 takes any number of connections and believes the
// length a frame's header announces: one 32-byte header from a client that never logged in
// made a node allocate 4 GiB. The guard listens on the client port in CAF's place, relays
// each connection to the api's CAF listener on the loopback interface, and bounds what CAF
// would not:
//  - connections (node.max_connections): one more is closed as soon as it is accepted;
//  - a frame's size (node.max_message_bytes): a header announcing more closes its
//    connection, before CAF sees it;
//  - what CAF allocates: a frame goes on only once it has arrived whole, so memory follows
//    the bytes a client has sent, not those it announces; frames still arriving hold at most
//    node.max_buffered_bytes over all connections (one that would pass it is closed).
// Answers go back unchanged. One thread of its own.
//
// In front of the cluster's TLS door (cluster.tls_*) the stream is encrypted and its frames
// cannot be read: there the guard bounds connections only (`whole_frames` false), and only a
// peer holding a certificate of the cluster CA gets a frame to CAF at all.

#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>

namespace nf::net {

struct door_guard_options {
  std::string host;           ///< where clients connect (node.host)
  uint16_t port = 0;          ///< node.port (0: a free one)
  uint16_t target_port = 0;   ///< the api's CAF listener on 127.0.0.1
  size_t max_connections = 4096;
  uint64_t max_message_bytes = 268435456;
  uint64_t max_buffered_bytes = 1073741824;
  /// False: bytes go on as they come and only connections are bounded (a TLS stream).
  bool whole_frames = true;
  std::string name = "client_door";  ///< in its log lines: `<name>_refused`, `<name>_relay_failed`
};

class caf_door_guard {
public:
  explicit caf_door_guard(door_guard_options opts);
  ~caf_door_guard();
  caf_door_guard(const caf_door_guard&) = delete;
  caf_door_guard& operator=(const caf_door_guard&) = delete;

  /// Listens and starts relaying; the bound port.
  caf::expected<uint16_t> start();
  /// Stops listening and closes every relayed connection.
  void stop();

  /// Connections relayed now.
  size_t connections() const;

private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace nf::net
