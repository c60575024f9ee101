#pragma once

// A workflow read over the HTTP door, the way the HTTP and end-to-end suites check one.

#include <string>

#include <boost/json.hpp>

#include "caf/test/unit_test.hpp"
#include "tests/support/http_client.hpp"

namespace nf::test {

/// GET /api/workflow/{id}, which must answer 200: the execution in Conductor's shape.
inline boost::json::value workflow_over_http(http_client& http, const std::string& id) {
  auto r = http.get("/api/workflow/" + id);
  CAF_REQUIRE_EQUAL(r.status, 200u);
  return r.json();
}

/// The execution's "status".
inline std::string status_over_http(http_client& http, const std::string& id) {
  return std::string{workflow_over_http(http, id).at("status").as_string()};
}

} // namespace nf::test
