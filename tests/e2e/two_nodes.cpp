#include "tests/e2e/two_nodes.hpp"

#include <set>

#include <boost/json.hpp>
#include <caf/test/unit_test.hpp>

#include "store/sharding.hpp"

namespace nf::test {

using namespace std::chrono_literals;

bool await_even_split(e2e_fixture& f, const std::string& addr1, const std::string& addr2,
                      int partitions) {
  return f.await([&] {
    int one = 0, two = 0;
    for (const auto& [p, a] : f.partition_owners()) {
      one += a == addr1;
      two += a == addr2;
    }
    return one == partitions / 2 && two == partitions / 2;
  }, 30s);
}

std::pair<std::string, std::string> define_crossing_flow(e2e_fixture& f, const std::string& flow,
                                                         const std::string& prefix,
                                                         const std::string& addr1,
                                                         const std::string& addr2,
                                                         int partitions) {
  auto o = f.partition_owners();
  std::string on1, on2;
  for (int i = 0; i < 64 && (on1.empty() || on2.empty()); ++i) {
    auto q = prefix + std::to_string(i);
    const auto& a = o[queue_shard(q, partitions)];
    if (a == addr1 && on1.empty())
      on1 = q;
    if (a == addr2 && on2.empty())
      on2 = q;
  }
  CAF_REQUIRE(!on1.empty() && !on2.empty());
  CAF_MESSAGE("queue " << on1 << " is leased on node 1, " << on2 << " on node 2");
  f.define(R"([{"name": ")" + on1 + R"(", "responseTimeoutSeconds": 60},
    {"name": ")" + on2 + R"(", "responseTimeoutSeconds": 60},
    {"name": ")" + flow + R"(", "version": 1, "tasks": [
      {"name": ")" + on1 + R"(", "taskReferenceName": "first", "inputParameters": {"v": "${workflow.input.n}"}},
      {"name": ")" + on2 + R"(", "taskReferenceName": "second", "inputParameters": {"v": "${first.output.v}"}}],
     "outputParameters": {"n": "${second.output.v}"}}])");
  return {on1, on2};
}

std::vector<std::string> start_through_both(e2e_fixture& f, client& second,
                                            const std::string& flow, int n, int partitions) {
  std::vector<std::string> ids;
  for (int i = 0; i < 2 * n; ++i) {
    auto input = R"({"n": )" + std::to_string(i) + "}";
    if (i < n) {
      ids.push_back(f.start(flow, input));
    } else {
      msg::start_request req;
      req.workflow_name = flow;
      req.input_json = input;
      auto r = second.start(req);
      CAF_REQUIRE(r);
      ids.push_back(r->workflow_id);
    }
  }
  auto o = f.partition_owners();
  std::set<std::string> owner_of_started;
  for (const auto& id : ids)
    owner_of_started.insert(o[shard_of(id, partitions)]);
  CAF_REQUIRE_EQUAL(owner_of_started.size(), 2u);
  return ids;
}

void expect_echoed(e2e_fixture& f, const std::vector<std::string>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    CAF_REQUIRE_EQUAL(f.await_end(ids[i], 60s), "COMPLETED");
    CAF_CHECK(f.get(ids[i]).at("output")
              == boost::json::parse(R"({"n": )" + std::to_string(i) + "}"));
  }
}

} // namespace nf::test
