#define CAF_SUITE e2e.caf_auth

// The client protocol with credentials checked (the default): a client logs in with an API
// key when it connects and every request carries the session's token. Nothing but the login
// (and readiness) is served without one; each request is refused below its role and taken at
// or above it; a key acts in its own namespace whatever the request names; and a connected
// client cannot pass its requests off as another node's (`forward_atom`).

#include "caf/test/unit_test.hpp"

#include <functional>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "net/client/system_config.hpp"
#include "proto/client_api.hpp"
#include "proto/errors.hpp"
#include "store/ids.hpp"
#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

using test::rank_of;
using test::roles;

bool refused_as(const caf::error& err, errc code) {
  return err && nf::is_nodeflow_error(err) && nf::code_of(err) == code;
}

template <class T>
caf::error error_of(const caf::expected<T>& r) {
  return r ? caf::error{} : r.error();
}

// One request of the protocol, made through the client library, and the least role it needs.
struct probe {
  std::string what;
  std::string needs;
  std::function<caf::error(client&)> run;
};

// Every request a client can make, each about objects that do not exist (an allowed one is
// answered, or fails in its checks or its handler, and changes nothing).
std::vector<probe> every_request() {
  auto nobody = new_uuidv7();
  msg::leased_task fake{nobody, nobody, "r", 0, 1, "SIMPLE", "probe", "{}", "token", 0};
  return {
    {"register definitions", "admin",
     [](client& c) { return error_of(c.register_definitions(R"({"name":"probe_task"})")); }},
    {"definitions list", "reader",
     [](client& c) {
       msg::definitions_query q;
       return error_of(c.definitions(q));
     }},
    {"definitions delete", "admin",
     [](client& c) {
       msg::definitions_query q;
       q.op = "delete";
       q.name = "no_such_task";
       return error_of(c.definitions(q));
     }},
    {"start", "operator",
     [](client& c) {
       msg::start_request r;
       r.workflow_name = "no_such_workflow";
       return error_of(c.start(r));
     }},
    {"get", "reader", [nobody](client& c) { return error_of(c.get(nobody)); }},
    {"search", "reader", [](client& c) { return error_of(c.search(msg::search_request{})); }},
    {"pause", "operator", [nobody](client& c) { return error_of(c.pause(nobody)); }},
    {"terminate", "operator", [nobody](client& c) { return error_of(c.terminate(nobody)); }},
    {"signal", "operator", [nobody](client& c) { return error_of(c.signal(nobody, "go")); }},
    {"poll", "worker",
     [](client& c) {
       msg::poll_request r;
       r.queue = "probe_queue";
       r.worker_id = "probe";
       r.timeout_ms = 0;
       return error_of(c.poll(r));
     }},
    {"complete", "worker", [fake](client& c) { return error_of(c.complete(fake)); }},
    {"report batch", "worker",
     [nobody](client& c) {
       msg::task_result r;
       r.task_id = nobody;
       r.workflow_id = nobody;
       r.lease_token = "token";
       return error_of(c.report_batch({r}));
     }},
    {"heartbeat", "worker", [fake](client& c) { return error_of(c.heartbeat(fake)); }},
    {"progress", "worker",
     [nobody](client& c) {
       msg::task_progress p;
       p.task_id = nobody;
       p.workflow_id = nobody;
       return error_of(c.progress(p));
     }},
    {"update task by reference", "worker",
     [nobody](client& c) {
       msg::task_ref_update u;
       u.workflow_id = nobody;
       u.task_ref = "wait";
       return error_of(c.update_task(u));
     }},
    {"events", "reader",
     [nobody](client& c) {
       msg::events_request r;
       r.workflow_id = nobody;
       return error_of(c.events(r));
     }},
    {"dead letters list", "reader",
     [](client& c) { return error_of(c.deadletters(msg::deadletter_request{})); }},
    {"dead letters replay", "operator",
     [](client& c) {
       msg::deadletter_request r;
       r.op = "replay";
       r.ids = {987654321};
       return error_of(c.deadletters(r));
     }},
    {"namespaces list", "admin",
     [](client& c) { return error_of(c.namespaces(msg::namespace_request{})); }},
    {"status", "reader", [](client& c) { return error_of(c.status()); }},
  };
}

struct fixture {
  test::e2e_fixture f{"e2e_caf_auth"};

  fixture() {
    f.start_node({{"auth.enabled", "true"}, {"auth.key_refresh_ms", "300"}});
  }

  client_options with_key(const std::pair<std::string, std::string>& key) {
    auto o = f.client_opts();
    o.key_id = key.first;
    o.key_secret = key.second;
    return o;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(caf_auth, fixture)

CAF_TEST(nothing is served without a credential and a wrong secret cannot log in) {
  client anonymous{f.client_opts()};
  for (const auto& p : every_request()) {
    auto err = p.run(anonymous);
    if (!refused_as(err, errc::unauthenticated))
      CAF_FAIL(p.what << " without a credential: " << describe(err));
  }
  auto key = f.create_key("admin");
  key.second.back() = key.second.back() == '0' ? '1' : '0';
  client wrong{with_key(key)};
  auto ok = wrong.connect();
  CAF_REQUIRE(!ok);
  CAF_CHECK(refused_as(ok.error(), errc::unauthenticated));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 0);
}

CAF_TEST(every request is refused below its role and taken at or above it) {
  for (const auto& role : roles) {
    client c{with_key(f.create_key(role))};
    for (const auto& p : every_request()) {
      auto err = p.run(c);
      bool allowed = rank_of(role) >= rank_of(p.needs);
      if (allowed && (refused_as(err, errc::forbidden) || refused_as(err, errc::unauthenticated)))
        CAF_FAIL(p.what << " by a " << role << " key was refused: " << describe(err));
      if (!allowed && !refused_as(err, errc::forbidden))
        CAF_FAIL(p.what << " by a " << role << " key was not refused: " << describe(err));
      if (!allowed)
        CAF_CHECK(describe(err).find("needs the role " + p.needs) != std::string::npos);
    }
  }
}

CAF_TEST(a key acts in its own namespace whatever the request names) {
  client admin{with_key(f.create_key("admin"))};
  CAF_REQUIRE(admin.namespaces(msg::namespace_request{"create", "beta", {}}));
  CAF_REQUIRE(admin.register_definitions(R"([{"name": "alpha_task"},
    {"name": "alpha_flow", "version": 1,
     "tasks": [{"name": "alpha_task", "taskReferenceName": "a"}]}])"));
  msg::start_request s;
  s.workflow_name = "alpha_flow";
  auto started = admin.start(s);
  CAF_REQUIRE(started);
  const auto id = started->workflow_id;
  // A worker of "default" holds the task's lease.
  client worker{with_key(f.create_key("worker"))};
  msg::poll_request p;
  p.queue = "alpha_task";
  p.worker_id = "w1";
  p.timeout_ms = 5000;
  auto leased = worker.poll(p);
  CAF_REQUIRE(leased && leased->size() == 1);
  auto fingerprint = [&] {
    return f.scalar(R"(SELECT md5(string_agg(t::text, '|' ORDER BY t."id"))
                         FROM "TaskExecutions" t WHERE t."workflowId" = $1)",
                    store::params::of(id))
           + f.scalar(R"(SELECT "status"::text || "version" FROM "WorkflowExecutions" WHERE "id" = $1)",
                      store::params::of(id));
  };
  auto before = fingerprint();

  // A key of "beta", asking for "default" by name: it still acts in "beta".
  auto beta_opts = with_key(f.create_key("admin", {"--namespace", "beta"}));
  beta_opts.namespace_name = "default";
  client beta{beta_opts};
  CAF_CHECK(refused_as(error_of(beta.get(id)), errc::not_found));
  CAF_CHECK(refused_as(error_of(beta.pause(id)), errc::not_found));
  CAF_CHECK(refused_as(error_of(beta.signal(id, "go")), errc::not_found));
  msg::events_request ev;
  ev.workflow_id = id;
  auto events = beta.events(ev);
  CAF_CHECK(!events || events->empty());
  auto page = beta.search(msg::search_request{});
  CAF_REQUIRE(page);
  CAF_CHECK(page->items_json.find(id) == std::string::npos);
  auto defs = beta.definitions(msg::definitions_query{});
  CAF_REQUIRE(defs);
  CAF_CHECK(defs->find("alpha_task") == std::string::npos);
  auto result = leased->front();
  CAF_CHECK(!beta.complete(result, R"({"stolen": true})"));
  CAF_CHECK(!beta.heartbeat(result));
  p.timeout_ms = 0;
  auto other = beta.poll(p);
  CAF_CHECK(other && other->empty());
  CAF_CHECK_EQUAL(fingerprint(), before);
  // The rightful worker still finishes it.
  CAF_REQUIRE(worker.complete(result, R"({"done": true})"));
  CAF_CHECK_EQUAL(f.await_end(id, 30s), "COMPLETED");
}

CAF_TEST(a connected client cannot pass its requests off as those of a node) {
  auto [key_id, key_secret] = f.create_key("admin");
  client admin{with_key({key_id, key_secret})};
  CAF_REQUIRE(admin.connect());
  net::system_config cfg;
  caf::actor_system sys{cfg};
  auto remote = sys.middleman().remote_actor<client_api>("127.0.0.1", f.port);
  CAF_REQUIRE(remote);
  caf::scoped_actor self{sys};
  // A session of its own, as any client gets.
  msg::session session;
  self->request(*remote, 10s, login_atom_v, msg::login_request{key_id, key_secret})
    .receive([&](msg::session& s) { session = s; },
             [](caf::error& e) { CAF_FAIL("login: " << describe(e)); });
  CAF_REQUIRE(!session.token.empty());
  auto untyped = caf::actor_cast<caf::actor>(*remote);
  auto nobody = new_uuidv7();
  for (const std::string& credential : {std::string{}, session.token, std::string{"nfnode.x"}}) {
    msg::task_result r;
    r.task_id = nobody;
    r.workflow_id = nobody;
    r.lease_token = "token";
    r.credential = credential;
    caf::error err;
    self->request(untyped, 10s, forward_atom_v, r)
      .receive([](std::string&) {}, [&](caf::error& e) { err = e; });
    CAF_CHECK(refused_as(err, errc::forbidden));
    // A batch of them, as a node sends its peer the completions it gathered.
    err = caf::error{};
    self->request(untyped, 10s, forward_atom_v, std::vector<msg::task_result>{r, r})
      .receive([](std::vector<msg::report_outcome>&) {}, [&](caf::error& e) { err = e; });
    CAF_CHECK(refused_as(err, errc::forbidden));
    msg::workflow_command c;
    c.op = "terminate";
    c.workflow_id = nobody;
    c.credential = credential;
    err = caf::error{};
    self->request(untyped, 10s, forward_atom_v, c)
      .receive([](std::string&) {}, [&](caf::error& e) { err = e; });
    CAF_CHECK(refused_as(err, errc::forbidden));
  }
  // A token that does not hold is no credential at all.
  msg::workflow_query q;
  q.workflow_id = nobody;
  q.credential = session.token + "0";
  caf::error err;
  self->request(*remote, 10s, get_atom_v, q)
    .receive([](std::string&) {}, [&](caf::error& e) { err = e; });
  CAF_CHECK(refused_as(err, errc::unauthenticated));
  CAF_CHECK(f.await([&] {
    return test::tail_of(f.node_log).find("forward_refused") != std::string::npos;
  }, 10s));
}

CAF_TEST_FIXTURE_SCOPE_END()
