#pragma once

// The HTTP/1.1 client the engine's requests go out through (engine/http/request.hpp),
// over Boost.Beast. A batch runs concurrently on an io_context the caller's thread
// drives, so a detached actor delivers a batch in about the time of its slowest request;
// every phase is bounded by the request's timeouts.

#include "engine/http/request.hpp"

namespace nf::http {

class beast_client : public port {
public:
  std::vector<outcome> perform_all(const std::vector<request>& reqs,
                                   size_t max_in_flight = 32) override;
};

} // namespace nf::http
