#pragma once

// One proxied link: a listening port whose connections are forwarded to a
// target, through the link's current fault mode. Everything runs on the
// proxy's single poll loop, so a link needs no locks and can close a socket
// (with an RST when a fault asks for one) the moment it decides to.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "address.hpp"
#include "modes.hpp"
#include "pg_scanner.hpp"

namespace nf::fault {

/// A socket the poll loop waits on, and what to do when it is ready.
struct watch {
  int fd;
  short events;
  std::function<void(short)> on_ready;
};

class link {
public:
  link(std::string name, endpoint target, int listen_fd);
  ~link();
  link(const link&) = delete;
  link& operator=(const link&) = delete;

  const std::string& name() const { return name_; }
  std::uint16_t port() const { return port_; }
  const endpoint& target() const { return target_; }

  /// Replaces the link's mode, and with it every mode set for one source; `reset`
  /// also resets every open connection now.
  void set_mode(const mode& m);
  /// The mode of connections from one source address only (a pair of nodes cut while
  /// each still reaches the others); `reset` resets that source's open connections now.
  void set_mode_from(const std::string& source, const mode& m);
  /// The distinct source addresses of the open connections, in order.
  std::vector<std::string> sources() const;
  /// The next `n` COMMITs (over all connections) cut their connection.
  void cut_after_commit(long n) { cuts_pending_ = n; }
  /// `connections=N open=N bytes_up=N ...`
  std::string stats() const;

  /// Adds the sockets this link waits on; lowers `wake` to the next chunk due.
  void watch_into(std::vector<watch>& out, clock::time_point& wake);
  /// Sends what is due and closes what is finished.
  void pump(clock::time_point now);

private:
  struct chunk {
    std::string bytes;
    clock::time_point due;
    bool cut_after = false; // the chunk ends with a COMMIT to cut after
  };
  struct direction {
    std::deque<chunk> queue;
    std::size_t queued = 0; // bytes in `queue`
    std::size_t front_sent = 0;
    bool blocked = false; // the last send would have blocked
    bool source_done = false; // EOF read from the source
    bool fin_passed = false;
    pacing pace;
  };
  struct connection {
    int client = -1;
    int target = -1;
    bool connecting = false;
    bool target_started = false; // a blackhole does not dial the target until it lifts
    bool cut_pending = false; // a cut chunk is queued: read no more from the client
    bool dead = false;
    direction up; // client -> target
    direction down; // target -> client
    pg_scanner scanner;
    std::string source; // the client's address, numeric
  };

  const mode& mode_of(const connection& c) const;
  /// With `m` the reset mode: RSTs the open connections `which` names.
  template <class Pred>
  void reset_if(const mode& m, Pred which);

  void accept_all();
  void start_target(connection& c);
  void target_lost(connection& c);
  void report_connect_failure(const std::string& error);
  void on_connected(connection& c);
  void on_client_readable(connection& c);
  void on_target_readable(connection& c);
  void enqueue(connection& c, direction& d, std::string bytes, bool cut_after);
  void flush(connection& c, direction& d, int to, clock::time_point now);
  void finish(connection& c);
  void cut(connection& c);
  void abort(connection& c);
  bool dropping_answers(const connection& c) const {
    return mode_of(c).kind == mode_kind::half_open;
  }

  std::string name_;
  endpoint target_;
  int listen_fd_;
  std::uint16_t port_;
  mode mode_;
  std::map<std::string, mode> by_source_; // overrides mode_ for one client address
  long cuts_pending_ = 0;
  bool target_failing_ = false;
  std::mt19937 rng_{std::random_device{}()};
  std::map<std::uint64_t, std::unique_ptr<connection>> connections_;
  std::uint64_t next_id_ = 0;

  std::uint64_t accepted_ = 0;
  std::uint64_t bytes_up_ = 0;
  std::uint64_t bytes_down_ = 0;
  std::uint64_t cuts_ = 0;
  std::uint64_t resets_ = 0;
  std::uint64_t commits_seen_ = 0;
};

} // namespace nf::fault
