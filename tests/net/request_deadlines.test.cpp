#define CAF_SUITE net.deadlines
#include "caf/test/unit_test.hpp"

#include <string>
#include <vector>

#include <caf/sec.hpp>

#include "net/client/request_deadlines.hpp"

using namespace nf;
using namespace std::chrono_literals;

CAF_TEST(each request ends once: by its answer or by its deadline) {
  net::request_deadlines d;
  auto t = net::request_deadlines::clock::now();
  std::vector<std::string> failed;
  auto fail_as = [&](std::string name) {
    return [&failed, name](caf::error e) {
      CAF_CHECK(e == caf::sec::request_timeout);
      failed.push_back(name);
    };
  };
  auto a = d.add(t + 10ms, fail_as("a"));
  auto b = d.add(t + 5ms, fail_as("b"));
  auto c = d.add(t + 10ms, fail_as("c")); // the same deadline as a
  auto e = d.add(t + 20ms, fail_as("e"));
  CAF_CHECK_EQUAL(d.size(), 4u);
  CAF_CHECK(d.next_deadline() == t + 5ms);
  // Answered in time: settled once, and never failed.
  CAF_CHECK(d.settle(b));
  CAF_CHECK(!d.settle(b));
  CAF_CHECK(d.settle(a));
  CAF_CHECK(d.next_deadline() == t + 10ms);
  CAF_CHECK_EQUAL(d.expire(t + 9ms), 0u);
  CAF_CHECK_EQUAL(d.expire(t + 10ms), 1u);
  CAF_CHECK_EQUAL(failed, std::vector<std::string>{"c"});
  // An answer after the deadline finds nothing to deliver to.
  CAF_CHECK(!d.settle(c));
  CAF_CHECK(d.next_deadline() == t + 20ms);
  CAF_CHECK_EQUAL(d.expire(t + 1s), 1u);
  CAF_CHECK_EQUAL(failed, (std::vector<std::string>{"c", "e"}));
  CAF_CHECK(!d.settle(e));
  CAF_CHECK_EQUAL(d.size(), 0u);
  CAF_CHECK(!d.next_deadline());
}
