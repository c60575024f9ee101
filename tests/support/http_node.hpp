#pragma once

// The HTTP suites' fixture: a node of the suite's own with its HTTP door up and the suite's
// definitions loaded, and the calls a worker makes over that door.

#include <memory>
#include <string>

#include <boost/json.hpp>

#include "caf/test/unit_test.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"

namespace nf::test {

struct http_node {
  e2e_fixture f;
  std::unique_ptr<http_client> http;

  http_node(const std::string& suite, const std::string& definitions,
            const settings_list& settings = {})
    : f{suite, settings} {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<http_client>("127.0.0.1", f.http_port);
    f.define(definitions);
  }

  /// POST /api/workflow with `body`, which must answer 200: the new workflow's id.
  std::string start_over_http(const std::string& body) {
    auto r = http->post("/api/workflow", body);
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.body;
  }

  /// One task of `type` (of `domain`, if one is given), polled in up to 50 batch polls that
  /// each wait `wait_ms`; aborts the test without.
  boost::json::object poll_one(const std::string& type, const std::string& domain = {},
                               int wait_ms = 200) {
    for (int i = 0; i < 50; ++i) {
      auto r = http->get("/api/tasks/poll/batch/" + type + "?count=1&timeout="
                         + std::to_string(wait_ms) + "&workerid=w1"
                         + (domain.empty() ? "" : "&domain=" + domain));
      CAF_REQUIRE_EQUAL(r.status, 200u);
      auto v = r.json();
      if (!v.as_array().empty())
        return v.as_array()[0].as_object();
    }
    CAF_FAIL("no task of type " << type << " came; node log:\n" << f.node_log_tail());
    return {};
  }

  /// POST /api/tasks: `task`'s result with `status`, plus the `extra` fields (outputData...).
  http_reply report(const boost::json::object& task, const std::string& status,
                    boost::json::object extra = {}) {
    extra["taskId"] = task.at("taskId");
    extra["workflowInstanceId"] = task.at("workflowInstanceId");
    extra["status"] = status;
    return http->post("/api/tasks", boost::json::serialize(extra));
  }
};

} // namespace nf::test
