#pragma once

// Reads a LISTENing connection's notifications, for the checks of the history's NOTIFY
// trigger (migrations 0009 and 0021).

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <libpq-fe.h>
#include <poll.h>

#include "store/pg/connection.hpp"

namespace nf::test {

/// Every payload `listener` receives until `until` arrives or `wait` passes, in arrival order.
inline std::vector<std::string>
notifications_until(store::connection& listener, const std::string& until,
                    std::chrono::milliseconds wait = std::chrono::seconds{10}) {
  std::vector<std::string> seen;
  auto* pg = listener.native();
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    PQconsumeInput(pg);
    while (PGnotify* n = PQnotifies(pg)) {
      seen.emplace_back(n->extra);
      PQfreemem(n);
    }
    if (std::find(seen.begin(), seen.end(), until) != seen.end())
      return seen;
    pollfd fd{PQsocket(pg), POLLIN, 0};
    ::poll(&fd, 1, 100);
  }
  return seen;
}

} // namespace nf::test
