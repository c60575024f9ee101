#pragma once

// Test helpers for the fault proxy's suite: the proxy as a child process, an
// echo server as its target, and blocking socket calls with deadlines.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace nf::test {

using std::chrono::milliseconds;

/// `nodeflow-fault-proxy --control 127.0.0.1:0 [--link ...]`, started and
/// read up to `ready`; stopped with `quit` (SIGKILL if it does not go).
class proxy_process {
public:
  explicit proxy_process(const std::vector<std::string>& links);
  ~proxy_process();
  proxy_process(const proxy_process&) = delete;
  proxy_process& operator=(const proxy_process&) = delete;

  std::uint16_t control_port() const { return control_port_; }
  std::uint16_t link_port(const std::string& name) const { return link_ports_.at(name); }
  /// Sends one control line and returns the reply line.
  std::string ctl(const std::string& line) const;
  /// Whether the process has exited, waiting up to `wait` for it.
  bool exited_within(milliseconds wait);

private:
  int pid_ = -1;
  bool reaped_ = false;
  std::uint16_t control_port_ = 0;
  std::map<std::string, std::uint16_t> link_ports_;
};

/// Echoes every byte back; a chunk holding "close" makes it close that
/// connection instead. Counts what it received.
class echo_server {
public:
  echo_server();
  ~echo_server();
  std::uint16_t port() const { return port_; }
  std::size_t received() const { return received_; }

private:
  void run();
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> received_{0};
  std::thread thread_;
};

struct read_result {
  std::string data;
  bool eof = false;
  int error = 0; // errno of a failed recv (ECONNRESET after an RST)
};

/// A blocking connection to 127.0.0.1:port, from `source` when given (another loopback
/// address, as another node would come from); -1 when refused.
int dial(std::uint16_t port, const std::string& source = "");
/// Reads until `want` bytes, EOF, an error or `wait` has passed.
read_result read_for(int fd, milliseconds wait, std::size_t want = 1 << 20);
void send_all(int fd, const std::string& bytes);

} // namespace nf::test
