#define CAF_SUITE http.namespaces

// Namespaces: managed over HTTP (create, list, remove with its refusals), and isolating.
// Two namespaces hold definitions of the same names and workflows of their own; every read
// and write one of them makes on the other's rows answers `not found` (or finds nothing), and
// the other's rows are byte for byte what they were. The matrix runs through the CAF door,
// whose client names its namespace itself (that door authenticates no one yet); the HTTP
// door acts in its principal's namespace, "default" for every request today.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "proto/errors.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// The same names in every namespace; `description` tells whose a definition is.
std::string definitions(const std::string& whose) {
  return R"([{"name": "work", "description": ")" + whose + R"("},
    {"name": "flow", "description": ")" + whose + R"(", "tasks": [
      {"name": "work", "taskReferenceName": "w"},
      {"name": "hold", "taskReferenceName": "h", "type": "WAIT"}]}])";
}

struct fixture {
  test::e2e_fixture f{"http_namespaces"};
  std::unique_ptr<test::http_client> http;

  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }

  client_options in(const std::string& ns) const {
    auto o = f.client_opts();
    o.namespace_name = ns;
    return o;
  }

  void create(const std::string& name) {
    auto r = http->post("/api/namespaces", R"({"name": ")" + name + R"("})");
    CAF_REQUIRE_EQUAL(r.status, 201u);
  }

  std::string id_of(const std::string& name) {
    return f.scalar(R"(SELECT "id"::text FROM "Namespaces" WHERE "name" = $1)",
                    store::params::of(name));
  }

  // Every row of namespace `ns_id` any request could touch, as one text: equal texts mean
  // nothing of it changed.
  std::string rows_of(const std::string& ns_id) {
    return f.scalar(R"(
      SELECT concat_ws(' | ',
        (SELECT string_agg(row_to_json(w)::text, ',' ORDER BY w."id")
           FROM "WorkflowExecutions" w WHERE w."namespaceId" = $1::uuid),
        (SELECT string_agg(row_to_json(t)::text, ',' ORDER BY t."id")
           FROM "TaskExecutions" t WHERE t."namespaceId" = $1::uuid),
        (SELECT string_agg(row_to_json(e)::text, ',' ORDER BY e."workflowId", e."seq")
           FROM "WorkflowEvents" e WHERE e."namespaceId" = $1::uuid),
        (SELECT string_agg(row_to_json(q)::text, ',' ORDER BY q."id")
           FROM "TaskQueues" q WHERE q."queueName" LIKE $2),
        (SELECT string_agg(row_to_json(d)::text, ',' ORDER BY d."workflowId")
           FROM "DecideQueues" d WHERE d."namespaceId" = $1::uuid),
        (SELECT string_agg(row_to_json(o)::text, ',' ORDER BY o."id")
           FROM "OutboxEvents" o WHERE o."namespaceId" = $1::uuid),
        (SELECT string_agg(row_to_json(td)::text, ',' ORDER BY td."name")
           FROM "TaskDefinitions" td WHERE td."namespaceId" = $1::uuid),
        (SELECT string_agg(row_to_json(wd)::text, ',' ORDER BY wd."name", wd."version")
           FROM "WorkflowDefinitions" wd WHERE wd."namespaceId" = $1::uuid)))",
                    store::params::of(ns_id, ns_id + ":%"));
  }
};

bool not_found(const caf::error& e) {
  return nf::code_of(e) == nf::errc::not_found;
}

template <class T>
bool is_not_found(const caf::expected<T>& r) {
  if (r)
    return false;
  return not_found(r.error());
}

boost::json::value parsed(const caf::expected<std::string>& r) {
  CAF_REQUIRE(r);
  return boost::json::parse(*r);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_namespaces, fixture)

CAF_TEST(namespaces are created listed and removed over HTTP) {
  create("gamma");
  CAF_CHECK_EQUAL(http->post("/api/namespaces", R"({"name": "gamma"})").status, 409u);
  auto bad = http->post("/api/namespaces", R"({"name": "Not A Name"})");
  CAF_CHECK_EQUAL(bad.status, 400u);
  auto bad_body = bad.json();
  CAF_CHECK_EQUAL(bad_body.at("validationErrors").as_array()[0].at("path").as_string(), "name");
  CAF_CHECK_EQUAL(http->post("/api/namespaces", R"({"name": "x", "id": "y"})").status, 400u);
  auto list = http->get("/api/namespaces");
  CAF_REQUIRE_EQUAL(list.status, 200u);
  auto listed = list.json();
  std::vector<std::string> names;
  for (const auto& n : listed.at("namespaces").as_array())
    names.emplace_back(n.at("name").as_string());
  CAF_CHECK_EQUAL(names, (std::vector<std::string>{"default", "gamma"}));
  CAF_CHECK_EQUAL(http->del("/api/namespaces/default").status, 400u);
  CAF_CHECK_EQUAL(http->del("/api/namespaces/nosuch").status, 404u);
  // A namespace holding a definition stays, and says why.
  client gamma{in("gamma")};
  CAF_REQUIRE(gamma.register_definitions(R"({"name": "only_task"})"));
  auto held = http->del("/api/namespaces/gamma");
  CAF_CHECK_EQUAL(held.status, 409u);
  std::string held_why{held.json().at("message").as_string()};
  CAF_CHECK_NOT_EQUAL(held_why.find("1 task definition"), std::string::npos);
  msg::definitions_query drop;
  drop.op = "delete";
  drop.name = "only_task";
  CAF_REQUIRE(gamma.definitions(drop));
  CAF_CHECK_EQUAL(http->del("/api/namespaces/gamma").status, 200u);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "Namespaces" WHERE "name" = 'gamma')"), 0);
  // Gone for its clients too.
  CAF_CHECK(is_not_found(gamma.definitions(msg::definitions_query{})));
  client nobody{in("never_made")};
  CAF_CHECK(is_not_found(nobody.search(msg::search_request{})));
  // A running execution keeps its namespace too.
  create("delta");
  client delta{in("delta")};
  CAF_REQUIRE(delta.register_definitions(definitions("delta")));
  msg::start_request s;
  s.workflow_name = "flow";
  CAF_REQUIRE(delta.start(s));
  auto running = http->del("/api/namespaces/delta");
  CAF_CHECK_EQUAL(running.status, 409u);
  std::string running_why{running.json().at("message").as_string()};
  CAF_CHECK_NOT_EQUAL(running_why.find("running"), std::string::npos);
}

CAF_TEST(a namespace reaches none of the rows of another) {
  create("alpha");
  create("beta");
  client a{in("alpha")};
  client b{in("beta")};
  CAF_REQUIRE(a.register_definitions(definitions("alpha's")));
  CAF_REQUIRE(b.register_definitions(definitions("beta's")));
  CAF_REQUIRE(b.register_definitions(R"([{"name": "only_b"},
    {"name": "only_b_flow", "tasks": [{"name": "only_b", "taskReferenceName": "o"}]}])"));
  const auto a_id = id_of("alpha"), b_id = id_of("beta");
  msg::start_request s;
  s.workflow_name = "flow";
  // Beta: one workflow whose task is leased, one waiting at its WAIT.
  auto b_leased = b.start(s);
  auto b_waiting = b.start(s);
  CAF_REQUIRE(b_leased && b_waiting);
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskQueues" WHERE "queueName" = ')" + b_id
                              + ":work'",
                            2));
  // Alpha polls the queue of the same name and finds nothing of beta's.
  msg::poll_request poll;
  poll.queue = "work";
  poll.worker_id = "alpha-worker";
  auto none = a.poll(poll);
  CAF_REQUIRE(none);
  CAF_CHECK(none->empty());
  poll.worker_id = "beta-worker";
  poll.max_tasks = 2;
  auto leased = b.poll(poll);
  CAF_REQUIRE(leased);
  CAF_REQUIRE_EQUAL(leased->size(), 2u);
  auto task_of = [&](const std::string& wf) {
    return (*leased)[0].workflow_id == wf ? (*leased)[0] : (*leased)[1];
  };
  auto tb = task_of(b_leased->workflow_id);
  CAF_REQUIRE(b.complete(task_of(b_waiting->workflow_id)));
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = ')"
                              + b_waiting->workflow_id
                              + R"(' AND "refName" = 'h' AND "status" = 'IN_PROGRESS')",
                            1));
  // A dead letter of beta's.
  auto dead = f.count(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType", "payload",
                           "attempts", "lastError", "deadLetteredAt")
                         VALUES (0, $1::uuid, 'workflow.started', '{}', 10, 'sink down', now())
                         RETURNING "id")",
                      store::params::of(b_id));
  // Alpha's own workflow, for the reads that must find only alpha's.
  auto a_wf = a.start(s);
  CAF_REQUIRE(a_wf);
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskQueues" WHERE "queueName" = ')" + a_id
                              + ":work'",
                            1));
  const auto before = rows_of(b_id);
  CAF_REQUIRE(!before.empty());

  // Reads: not found, or nothing of beta's.
  for (const auto& wf : {b_leased->workflow_id, b_waiting->workflow_id}) {
    CAF_CHECK(is_not_found(a.get(wf)));
    msg::events_request ev;
    ev.workflow_id = wf;
    CAF_CHECK(is_not_found(a.events(ev)));
  }
  auto page = a.search(msg::search_request{});
  CAF_REQUIRE(page);
  auto items = boost::json::parse(page->items_json).as_array();
  CAF_REQUIRE_EQUAL(items.size(), 1u);
  CAF_CHECK_EQUAL(items[0].at("workflowId").as_string(), a_wf->workflow_id);
  // Definitions: alpha's own of the same names, none of beta's.
  msg::definitions_query get_flow;
  get_flow.op = "get";
  get_flow.kind = "workflow";
  get_flow.name = "flow";
  auto a_flow = parsed(a.definitions(get_flow));
  auto b_flow = parsed(b.definitions(get_flow));
  auto a_tasks = parsed(a.definitions(msg::definitions_query{}));
  CAF_CHECK_EQUAL(a_flow.at("description").as_string(), "alpha's");
  CAF_CHECK_EQUAL(b_flow.at("description").as_string(), "beta's");
  CAF_CHECK_EQUAL(a_tasks.as_array().size(), 1u);
  msg::definitions_query get_only_b{"get", "task", "only_b", 0};
  CAF_CHECK(is_not_found(a.definitions(get_only_b)));
  msg::definitions_query del_task{"delete", "task", "only_b", 0};
  CAF_CHECK(is_not_found(a.definitions(del_task)));
  msg::definitions_query del_flow{"delete", "workflow", "only_b_flow", 1};
  CAF_CHECK(is_not_found(a.definitions(del_flow)));
  // Dead letters: alpha lists none and replays nothing.
  auto letters = parsed(a.deadletters(msg::deadletter_request{"list", {}, 0, 100}));
  CAF_CHECK(letters.at("deadLetters").as_array().empty());
  CAF_CHECK(is_not_found(a.deadletters(msg::deadletter_request{"list", {}, dead, 100})));
  CAF_CHECK_EQUAL(*a.deadletters(msg::deadletter_request{"replay", {dead}, 0, 100}),
                  R"({"replayed":0})");
  CAF_CHECK_EQUAL(*a.deadletters(msg::deadletter_request{"replay", {}, 0, 100}),
                  R"({"replayed":0})");

  // Writes on beta's task and workflows: not found, and nothing changes.
  CAF_CHECK(is_not_found(a.complete(tb)));
  CAF_CHECK(is_not_found(a.fail(tb, "no", true)));
  auto batch = a.report_batch({msg::task_result{tb.task_id, tb.workflow_id, tb.lease_token,
                                                "COMPLETED", "{}", {}, {}}});
  CAF_REQUIRE(batch);
  CAF_REQUIRE_EQUAL(batch->size(), 1u);
  CAF_REQUIRE(!(*batch)[0]);
  CAF_CHECK(not_found((*batch)[0].error()));
  CAF_CHECK(is_not_found(a.heartbeat(tb)));
  msg::task_progress progress;
  progress.task_id = tb.task_id;
  progress.workflow_id = tb.workflow_id;
  progress.logs_json = R"([{"log": "from alpha", "createdTime": 1}])";
  CAF_CHECK(is_not_found(a.progress(progress)));
  msg::task_ref_update wait_done;
  wait_done.workflow_id = b_waiting->workflow_id;
  wait_done.task_ref = "h";
  CAF_CHECK(is_not_found(a.update_task(wait_done)));
  CAF_CHECK(is_not_found(a.signal(b_waiting->workflow_id, "go")));
  for (const auto& wf : {b_leased->workflow_id, b_waiting->workflow_id}) {
    CAF_CHECK(is_not_found(a.pause(wf)));
    CAF_CHECK(is_not_found(a.resume(wf)));
    CAF_CHECK(is_not_found(a.terminate(wf)));
    CAF_CHECK(is_not_found(a.retry(wf)));
    CAF_CHECK(is_not_found(a.restart(wf)));
    CAF_CHECK(is_not_found(a.rerun(wf, "w")));
  }
  CAF_CHECK_EQUAL(rows_of(b_id), before);

  // The same requests from beta itself do act: the refusals above were the namespace's.
  CAF_CHECK(b.heartbeat(tb));
  auto own_progress = b.progress(progress);
  CAF_CHECK_EQUAL(own_progress ? std::string{"ok"} : describe(own_progress.error()), "ok");
  CAF_CHECK(b.complete(tb));
  CAF_CHECK(b.update_task(wait_done));
  CAF_CHECK(b.definitions(del_flow));
  CAF_CHECK_EQUAL(*b.deadletters(msg::deadletter_request{"replay", {dead}, 0, 100}),
                  R"({"replayed":1})");
  CAF_CHECK_EQUAL(f.await_end(b_waiting->workflow_id, 30s), "COMPLETED");
  CAF_CHECK_NOT_EQUAL(rows_of(b_id), before);
}

CAF_TEST(the HTTP door acts in its principal namespace) {
  f.define(definitions("default's"));
  create("alpha");
  client a{in("alpha")};
  CAF_REQUIRE(a.register_definitions(definitions("alpha's")));
  msg::start_request s;
  s.workflow_name = "flow";
  auto a_wf = a.start(s);
  CAF_REQUIRE(a_wf);
  auto started = http->post("/api/workflow/flow", "{}");
  CAF_REQUIRE_EQUAL(started.status, 200u);
  auto mine = started.body;
  CAF_CHECK_EQUAL(http->get("/api/workflow/" + mine).status, 200u);
  CAF_CHECK_EQUAL(http->get("/api/workflow/" + a_wf->workflow_id).status, 404u);
  CAF_CHECK_EQUAL(http->post("/api/workflow/" + a_wf->workflow_id + "/signal/go", "{}").status,
                  404u);
  CAF_CHECK_EQUAL(http->put("/api/workflow/" + a_wf->workflow_id + "/pause", "").status, 404u);
  CAF_CHECK_EQUAL(http->del("/api/workflow/" + a_wf->workflow_id).status, 404u);
  auto def = http->get("/api/metadata/workflow/flow");
  CAF_REQUIRE_EQUAL(def.status, 200u);
  auto def_body = def.json();
  CAF_CHECK_EQUAL(def_body.at("description").as_string(), "default's");
  // The default namespace's own client sees what HTTP started, alpha's does not.
  client d{f.client_opts()};
  CAF_CHECK(d.get(mine));
  CAF_CHECK(is_not_found(a.get(mine)));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions" w
                               JOIN "Namespaces" n ON n."id" = w."namespaceId"
                              WHERE n."name" = 'alpha' AND w."status" <> 'RUNNING')"),
                  0);
}

CAF_TEST_FIXTURE_SCOPE_END()
