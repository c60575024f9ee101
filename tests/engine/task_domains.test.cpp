#define CAF_SUITE engine.task_domains
#include "caf/test/unit_test.hpp"

// taskToDomain: which mappings a start accepts, which domain a task is routed to, and the
// queue its row is inserted with (in and out of the default namespace).

#include <boost/json/parse.hpp>

#include "engine/decide/mapping.hpp"
#include "engine/decide/task_domains.hpp"
#include "proto/domains.hpp"
#include "proto/namespaces.hpp"

using namespace nf;

namespace {

boost::json::object object(const char* text) {
  return boost::json::parse(text).as_object();
}

flow::scheduled_task worker_task(const char* name, const char* queue) {
  flow::scheduled_task t;
  t.id = {"r", 0, 0};
  t.type = flow::task_type::simple;
  t.task_def_name = name;
  t.queue = queue;
  return t;
}

}  // namespace

CAF_TEST(a mapping names one domain per task) {
  CAF_CHECK_EQUAL(engine::check_task_to_domain(object(R"({"echo":"blue","*":"NO_DOMAIN"})")), "");
  CAF_CHECK_EQUAL(engine::check_task_to_domain(object(R"({"echo":"blue,green"})")),
                  "taskToDomain.echo: a list of fallback domains is not supported (expected one domain)");
  CAF_CHECK_EQUAL(engine::check_task_to_domain(object(R"({"echo":"bl:ue"})")),
                  "taskToDomain.echo: expected 1-128 of A-Z a-z 0-9 _ -, got \"bl:ue\"");
  CAF_CHECK_EQUAL(engine::check_task_to_domain(object(R"({"echo":null})")),
                  "taskToDomain.echo: expected a domain (a string)");
  CAF_CHECK_EQUAL(engine::check_task_to_domain(object(R"({"":"blue"})")),
                  "taskToDomain: a task name must not be empty");
}

CAF_TEST(a task name maps before the star) {
  auto m = object(R"({"echo":"blue","*":"green","plain":"no_domain"})");
  CAF_CHECK_EQUAL(engine::domain_of(m, "echo"), "blue");
  CAF_CHECK_EQUAL(engine::domain_of(m, "other"), "green");
  CAF_CHECK_EQUAL(engine::domain_of(m, "plain"), "");
  CAF_CHECK_EQUAL(engine::domain_of(object(R"({"echo":"blue"})"), "other"), "");
  CAF_CHECK_EQUAL(domain_queue("blue", "echo"), "blue:echo");
  CAF_CHECK_EQUAL(domain_queue("", "echo"), "echo");
  CAF_CHECK_EQUAL(domain_queue("NO_DOMAIN", "echo"), "echo");
  CAF_CHECK(valid_domain("blue-2_x") && !valid_domain("") && !valid_domain("a b"));
}

CAF_TEST(inserted worker tasks go to their domain queue) {
  const auto& def_ns = default_namespace;
  namespace_id other{"0190f5c1-0000-7000-8000-000000000042"};
  auto m = object(R"({"echo":"blue"})");
  CAF_CHECK_EQUAL(engine::to_insert(worker_task("echo", "echo"), def_ns, m).queue, "blue:echo");
  CAF_CHECK_EQUAL(engine::to_insert(worker_task("echo", "echo"), other, m).queue,
                  other.str() + ":blue:echo");
  CAF_CHECK_EQUAL(engine::to_insert(worker_task("send", "mail"), def_ns, m).queue, "mail");
  // A task definition's queueName is what the domain qualifies; the task name picks it.
  CAF_CHECK_EQUAL(engine::to_insert(worker_task("echo", "mail"), def_ns, m).queue, "blue:mail");
  CAF_CHECK_EQUAL(engine::to_insert(worker_task("echo", "echo"), def_ns).queue, "echo");
  // The queue as its definitions know it, for the lessor's lease policy.
  CAF_CHECK_EQUAL(plain_queue(other.str() + ":blue:echo"), "echo");
  CAF_CHECK_EQUAL(plain_queue("blue:echo"), "echo");
  CAF_CHECK_EQUAL(plain_queue("echo"), "echo");
  store::workflow_snapshot s;
  CAF_CHECK(engine::task_to_domain_of(s).empty());
  s.task_to_domain = R"({"*":"green"})";
  CAF_CHECK_EQUAL(engine::domain_of(engine::task_to_domain_of(s), "x"), "green");
}
