#pragma once

// The HTTP/1.1 client the engine's requests go out through (engine/http/request.hpp),
// over Boost.Beast. A batch runs concurrently on an io_context the caller's thread
// drives, so a detached actor delivers a batch in about the time of its slowest request;
// every phase is bounded by the request's timeouts.

#include <utility>

#include "engine/http/egress.hpp"
#include "engine/http/request.hpp"

namespace nf::http {

class beast_client : public port {
public:
  /// Every request is checked against `egress` (its name, then each address it resolved
  /// to) before a connection is tried.
  explicit beast_client(egress_policy egress = egress_policy::defaults())
    : egress_(std::move(egress)) {}

  std::vector<outcome> perform_all(const std::vector<request>& reqs,
                                   size_t max_in_flight = 32) override;

private:
  egress_policy egress_;
};

} // namespace nf::http
