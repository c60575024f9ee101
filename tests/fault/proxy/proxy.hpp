#pragma once

// The proxy: its links, its control port and the one poll loop that drives
// them all.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "address.hpp"
#include "link.hpp"

namespace nf::fault {

class proxy {
public:
  proxy();
  ~proxy();
  proxy(const proxy&) = delete;
  proxy& operator=(const proxy&) = delete;

  /// Listens for control clients; false with `error` when it cannot.
  bool open_control(const endpoint& at, std::string& error);
  const endpoint& control() const { return control_; }

  /// A new link listening on 127.0.0.1:listen_port (0 = a free port) and
  /// forwarding to `target`; its port, or nullopt with `error`.
  std::optional<std::uint16_t> add_link(const std::string& name, const endpoint& target,
                                        std::uint16_t listen_port, std::string& error);
  link* find(const std::string& name);
  const std::vector<std::unique_ptr<link>>& links() const { return links_; }

  /// Serves until `quit` or SIGTERM/SIGINT.
  void run();
  void request_quit() { quit_ = true; }

private:
  struct client {
    int fd;
    std::string in;
    std::string out;
    bool closing = false;
  };
  void accept_clients();
  void serve(client& c);
  void send_out(client& c);

  endpoint control_;
  int control_fd_ = -1;
  std::vector<std::unique_ptr<client>> clients_;
  std::vector<std::unique_ptr<link>> links_;
  bool quit_ = false;
};

} // namespace nf::fault
