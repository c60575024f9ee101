// GET /metrics: the node's own numbers for Prometheus. The in-process registry
// (engine/metrics/node_metrics.hpp) is read as it is; what only the store knows (queue
// depths, pending decisions, the outbox) is asked of a store worker through the client
// protocol (metrics_atom), so no HTTP thread waits on the database. A store that does not
// answer leaves its families empty and `nodeflow_store_read_up` 0: the registry's numbers
// are still worth a scrape.

#include <boost/json.hpp>

#include "engine/metrics/node_metrics.hpp"
#include "net/web/metrics_text.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/series_sampler.hpp"

namespace nf::net::web {

namespace {

using engine::metrics::family_snapshot;
using engine::metrics::kind;
using engine::metrics::sample;

family_snapshot gauge_family(std::string name, std::string help,
                             std::vector<std::string> labels = {}) {
  family_snapshot f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = kind::gauge;
  f.label_names = std::move(labels);
  return f;
}

int64_t int_at(const boost::json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_int64() ? v->as_int64() : 0;
}

double seconds_at(const boost::json::object& o, const char* key) {
  return static_cast<double>(int_at(o, key)) / 1000.0;
}

const boost::json::object& object_at(const boost::json::object& o, const char* key) {
  static const boost::json::object none;
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? v->as_object() : none;
}

/// The store's families from its JSON (engine/metrics/store_part.hpp); empty ones when it
/// could not be read.
std::vector<family_snapshot> store_families(const boost::json::object* store) {
  auto cap = std::to_string(store ? int_at(*store, "cap") : 0);
  auto ready = gauge_family("nodeflow_queue_ready_tasks",
                            "Tasks ready in a task queue, not leased (read from the store at "
                            "scrape; counts stop at " + cap + ")",
                            {"queue"});
  auto leased = gauge_family("nodeflow_queue_leased_tasks",
                             "Tasks of a task queue leased to workers (read from the store at "
                             "scrape; counts stop at " + cap + ")",
                             {"queue"});
  auto oldest = gauge_family("nodeflow_queue_oldest_ready_age_seconds",
                             "Age of the ready task enqueued first in a task queue; 0 when none "
                             "is ready (read from the store at scrape)",
                             {"queue"});
  auto pending = gauge_family("nodeflow_decide_pending",
                              "Workflow evaluations waiting in DecideQueues, every node's "
                              "(read from the store at scrape; counts stop at " + cap + ")");
  auto lag = gauge_family("nodeflow_decide_oldest_pending_age_seconds",
                          "Decide lag: how long the oldest waiting evaluation in DecideQueues "
                          "has waited since its wake was enqueued; 0 when none waits (read "
                          "from the store at scrape)");
  auto backlog = gauge_family("nodeflow_outbox_backlog",
                              "Outbox events neither delivered nor dead-lettered (read from the "
                              "store at scrape; counts stop at " + cap + ")");
  auto dead = gauge_family("nodeflow_outbox_dead_letters",
                           "Outbox events that exhausted their deliveries (read from the store "
                           "at scrape; counts stop at " + cap + ")");
  auto up = gauge_family("nodeflow_store_read_up",
                         "1 when this scrape read the store's part (queues, decisions, "
                         "outbox), 0 when the store did not answer");
  up.samples.push_back(sample{{}, store ? 1.0 : 0.0, {}, 0});
  if (store) {
    if (const auto* qs = store->if_contains("queues"); qs && qs->is_array())
      for (const auto& qv : qs->as_array()) {
        if (!qv.is_object())
          continue;
        const auto& q = qv.as_object();
        const auto* name = q.if_contains("name");
        if (!name || !name->is_string())
          continue;
        std::vector<std::string> label{std::string{name->as_string()}};
        ready.samples.push_back(sample{label, static_cast<double>(int_at(q, "ready")), {}, 0});
        leased.samples.push_back(sample{label, static_cast<double>(int_at(q, "leased")), {}, 0});
        oldest.samples.push_back(sample{label, seconds_at(q, "oldestReadyAgeMs"), {}, 0});
      }
    const auto& d = object_at(*store, "decide");
    pending.samples.push_back(sample{{}, static_cast<double>(int_at(d, "pending")), {}, 0});
    lag.samples.push_back(sample{{}, seconds_at(d, "oldestAgeMs"), {}, 0});
    const auto& o = object_at(*store, "outbox");
    backlog.samples.push_back(sample{{}, static_cast<double>(int_at(o, "backlog")), {}, 0});
    dead.samples.push_back(sample{{}, static_cast<double>(int_at(o, "deadLetters")), {}, 0});
  }
  return {std::move(ready), std::move(leased), std::move(oldest), std::move(pending),
          std::move(lag),   std::move(backlog), std::move(dead),  std::move(up)};
}

void answer(const exchange_ptr& ex, const boost::json::object* store) {
  auto families = engine::metrics::node_registry().collect();
  for (auto& f : store_families(store))
    families.push_back(std::move(f));
  ex->respond(response{200, metrics_content_type, render_metrics(families), {}});
}

} // namespace

void add_metrics_route(router& r, const route_context& ctx) {
  r.add({verb::get, "/metrics",
         "The node's metrics in Prometheus' text format 0.0.4: workflows and tasks by name "
         "and status, leases, decide flushes, HTTP requests, store worker waits, partitions "
         "owned, and the store's queue depths, decide lag and outbox read at scrape",
         {}, body_kind::none, {}, "text/plain; version=0.0.4", "metrics", access::reader,
         [api = ctx.api](const exchange_ptr& ex) {
           // Touch the families so a node that counted nothing yet still lists them.
           (void)engine::metrics::node_metrics();
           api->ask<std::string>(
             [ex](std::string& json) {
               boost::json::error_code ec;
               auto v = boost::json::parse(json, ec);
               answer(ex, !ec && v.is_object() ? &v.as_object() : nullptr);
             },
             [ex](caf::error&) { answer(ex, nullptr); }, metrics_atom_v);
         }});
  if (ctx.series == nullptr)
    return;
  r.add({verb::get, "/api/metrics/series",
         "This node's throughput and latency over the last hour, one point per interval "
         "(what the web UI charts; Prometheus keeps longer series from /metrics)",
         {}, body_kind::none, {},
         "{\"intervalMs\":n,\"samples\":[{\"at\" (unix ms),\"workflowsStarted\","
         "\"workflowsEnded\",\"tasksEnded\",\"tasksLeased\" (per second),"
         "\"decideFlushP50Ms\",\"decideFlushP99Ms\",\"httpP99Ms\" (null: none in the "
         "interval)}]} oldest first",
         "metrics", access::reader, [series = ctx.series](const exchange_ptr& ex) {
           auto opt = [](const std::optional<double>& v) {
             return v ? boost::json::value(*v) : boost::json::value(nullptr);
           };
           boost::json::array samples;
           for (const auto& p : series->series().points())
             samples.push_back(boost::json::object{{"at", p.at_ms},
                                                   {"workflowsStarted", p.workflows_started},
                                                   {"workflowsEnded", p.workflows_ended},
                                                   {"tasksEnded", p.tasks_ended},
                                                   {"tasksLeased", p.tasks_leased},
                                                   {"decideFlushP50Ms", opt(p.decide_flush_p50_ms)},
                                                   {"decideFlushP99Ms", opt(p.decide_flush_p99_ms)},
                                                   {"httpP99Ms", opt(p.http_p99_ms)}});
           ex->respond_json(200, boost::json::object{
                                   {"intervalMs", series->interval().count()},
                                   {"samples", std::move(samples)}});
         }});
}

} // namespace nf::net::web
