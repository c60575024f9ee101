#pragma once

// A stand-in for a nodeflow node in tests of the client library and the CLI:
// its own actor system publishing a client_api on a loopback port, recording
// every request as a line of text and answering canned replies. Destroying it
// closes the port (as a killed node would).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nf::test {

struct fake_log {
  std::mutex mx;
  std::vector<std::string> lines;
  bool hold_polls = false; ///< polls are never answered (a node that dies mid-poll)
  /// The request ids of the signals to flaky_workflow, in order.
  std::vector<std::string> request_ids;

  void add(std::string line);
  std::vector<std::string> take();
};

/// A workflow whose signals the fake answers `unavailable` every other time.
constexpr const char* flaky_workflow = "00000000-0000-7000-8000-0000000f1a4e";

/// A workflow id the fake answers `not found` for.
constexpr const char* missing_workflow = "00000000-0000-7000-8000-00000000dead";

class fake_node {
public:
  /// Publishes on `port` (0 = any free port; reuse allowed, for restarts).
  explicit fake_node(uint16_t port = 0, std::shared_ptr<fake_log> log = nullptr);
  ~fake_node();
  fake_node(const fake_node&) = delete;
  fake_node& operator=(const fake_node&) = delete;

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  fake_log& log() { return *log_; }
  std::shared_ptr<fake_log> shared_log() const { return log_; }

private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::shared_ptr<fake_log> log_;
  uint16_t port_ = 0;
};

} // namespace nf::test
