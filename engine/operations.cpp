#include "engine/operations.hpp"

#include <algorithm>
#include <map>

#include <boost/json.hpp>

#include "engine/audit_trail.hpp"
#include "flow/json_read.hpp"
#include "flow/parse.hpp"
#include "flow/serialise.hpp"
#include "store/api_reads.hpp"
#include "store/cluster_view.hpp"
#include "store/decisions.hpp"
#include "store/definitions.hpp"
#include "store/events.hpp"
#include "store/input_errors.hpp"
#include "store/metrics_reads.hpp"
#include "store/namespaces.hpp"
#include "store/outbox.hpp"
#include "proto/errors.hpp"
#include "proto/namespaces.hpp"
#include "store/pg/transaction.hpp"
#include "store/lease_postpone.hpp"
#include "store/queues.hpp"
#include "store/schema/migrator.hpp"
#include "store/signals.hpp"
#include "store/task_progress.hpp"

namespace nf::engine {

namespace json = boost::json;

namespace_id namespace_of(const std::string& ns) {
  return ns.empty() ? default_namespace : namespace_id{ns};
}

namespace {

// A workflow of another namespace is as missing as one that never was: the error says
// nothing of its existence.
caf::error workflow_not_found(const std::string& id) {
  return nf::make_error(nf::errc::not_found, "workflow " + id + " not found");
}

// `not_found` unless workflow `id` exists in namespace `ns`.
caf::expected<void> check_in_namespace(store::connection& conn, const std::string& ns,
                                       const std::string& id) {
  auto h = store::read_execution_header(conn, workflow_id{id});
  if (!h)
    return std::move(h.error());
  if (h->ns != namespace_of(ns))
    return workflow_not_found(id);
  return caf::expected<void>{};
}

// Stored JSON text as a value; the store only holds valid JSON, so a parse
// failure would be a bug: keep the text rather than lose it.
json::value stored(const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  return ec ? json::value(text) : v;
}

json::value stored(const std::optional<std::string>& text) {
  return text ? stored(*text) : json::value(nullptr);
}

template <class T>
json::value opt(const std::optional<T>& x) {
  return x ? json::value(*x) : json::value(nullptr);
}

json::value opt_id(const std::optional<workflow_id>& x) {
  return x ? json::value(x->str()) : json::value(nullptr);
}

json::value opt_id(const std::optional<task_id>& x) {
  return x ? json::value(x->str()) : json::value(nullptr);
}

struct definitions_doc {
  std::vector<flow::task_def> tasks;
  std::vector<flow::workflow_def> workflows;
  flow::problems problems;
};

void read_one(const json::value& v, const std::string& path, definitions_doc& doc) {
  const auto* obj = v.if_object();
  if (obj == nullptr) {
    doc.problems.push_back({path.empty() ? "$" : path,
                            "expected a task or workflow definition (an object), got "
                              + flow::describe(v)});
    return;
  }
  if (flow::looks_like_workflow(*obj)) {
    flow::problems found;
    auto def = flow::read_workflow_def(v, path, found);
    if (found.empty())
      found = store::check_workflow_def(def, path);
    doc.problems.insert(doc.problems.end(), found.begin(), found.end());
    doc.workflows.push_back(std::move(def));
  } else {
    flow::problems found;
    auto def = flow::read_task_def(v, path, found);
    if (found.empty())
      found = store::check_task_def(def, path);
    doc.problems.insert(doc.problems.end(), found.begin(), found.end());
    doc.tasks.push_back(std::move(def));
  }
}

// The same definition twice in one request would make one upsert touch a row
// twice; name the second occurrence instead.
void check_duplicates(const json::array* arr, definitions_doc& doc) {
  if (arr == nullptr)
    return;
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto* obj = (*arr)[i].if_object();
    if (obj == nullptr || !obj->contains("name") || !(*obj).at("name").is_string())
      continue;
    std::string key = std::string{(*obj).at("name").as_string()};
    if (flow::looks_like_workflow(*obj)) {
      const auto* ver = obj->if_contains("version");
      key = "workflow " + key + " version " + (ver != nullptr ? json::serialize(*ver) : "1");
    } else {
      key = "task " + key;
    }
    auto [it, fresh] = seen.emplace(key, i);
    if (!fresh)
      doc.problems.push_back({flow::path_index("", i),
                              key + " is defined twice in this request (also at "
                                + flow::path_index("", it->second) + ")"});
  }
}

json::object task_json(const store::task_row& t) {
  return json::object{
    {"taskId", t.id.str()},
    {"referenceTaskName", t.identity.ref},
    {"iteration", t.identity.iteration},
    {"attempt", t.identity.attempt},
    {"taskType", std::string{flow::to_string(t.type)}},
    {"taskDefName", t.task_def_name},
    {"queueName", t.queue_name ? json::value(std::string{plain_queue(*t.queue_name)})
                               : json::value(nullptr)},
    {"status", std::string{flow::to_string(t.status)}},
    {"input", stored(t.input)},
    {"output", stored(t.output)},
    {"reasonForIncompletion", opt(t.reason_for_incompletion)},
    {"workerId", opt(t.worker_id)},
    {"pollCount", t.poll_count},
    {"retriedTaskId", opt_id(t.retried_task_id)},
    {"subWorkflowId", opt_id(t.sub_workflow_id)},
    {"scheduledTime", t.scheduled_at_ms},
    {"startTime", opt(t.started_at_ms)},
    {"endTime", opt(t.ended_at_ms)},
    {"updateTime", t.updated_at_ms},
  };
}

json::object execution_json(const store::workflow_snapshot& s, bool include_tasks) {
  json::object o{
    {"workflowId", s.id.str()},
    {"namespaceId", s.ns.str()},
    {"workflowName", s.workflow_name},
    {"workflowVersion", s.workflow_version},
    {"status", std::string{flow::to_string(s.status)}},
    {"input", stored(s.input)},
    {"output", stored(s.output)},
    {"variables", stored(s.variables)},
    {"reasonForIncompletion", opt(s.reason_for_incompletion)},
    {"failedTaskRef", opt(s.failed_task_ref)},
    {"correlationId", opt(s.correlation_id)},
    {"idempotencyKey", opt(s.idempotency_key)},
    {"priority", s.priority},
    // Conductor's Workflow carries the map it started with; {} when none.
    {"taskToDomain", s.task_to_domain ? stored(*s.task_to_domain) : json::value(json::object{})},
    {"parentWorkflowId", opt_id(s.parent_workflow_id)},
    {"parentTaskId", opt_id(s.parent_task_id)},
    {"shard", s.shard.value()},
    {"lastSeq", s.last_seq},
    {"startTime", s.started_at_ms},
    {"endTime", opt(s.ended_at_ms)},
  };
  if (include_tasks) {
    auto tasks = s.tasks;
    std::stable_sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) {
      return std::tie(a.scheduled_at_ms, a.identity.ref, a.identity.iteration, a.identity.attempt)
             < std::tie(b.scheduled_at_ms, b.identity.ref, b.identity.iteration,
                        b.identity.attempt);
    });
    json::array arr;
    for (const auto& t : tasks)
      arr.push_back(task_json(t));
    o["tasks"] = std::move(arr);
  }
  return o;
}

} // namespace

caf::expected<std::string> register_definitions(store::connection& conn,
                                                const msg::definitions_registration& r) {
  std::string_view text = r.text;
  definitions_doc doc;
  json::value root;
  if (!flow::parse_json(text, root, doc.problems))
    return store::invalid_input(doc.problems);
  const auto* arr = root.if_array();
  if (arr != nullptr) {
    if (arr->empty())
      return store::invalid_input({{"$", "expected at least one definition, got an empty array"}});
    for (size_t i = 0; i < arr->size(); ++i)
      read_one((*arr)[i], flow::path_index("", i), doc);
  } else {
    read_one(root, "", doc);
  }
  check_duplicates(arr, doc);
  if (!doc.problems.empty())
    return store::invalid_input(doc.problems);
  // One transaction for the whole request: a write that fails part way (the
  // database rejecting a row) leaves none of the others behind (I11).
  std::string target;
  json::array task_names, workflow_names;
  for (const auto& def : doc.workflows) {
    target += (target.empty() ? "" : ",") + std::string{"workflow:"} + def.name + "@"
              + std::to_string(def.version);
    workflow_names.push_back(json::object{{"name", def.name}, {"version", def.version}});
  }
  for (const auto& def : doc.tasks) {
    target += (target.empty() ? "" : ",") + std::string{"task:"} + def.name;
    task_names.emplace_back(def.name);
  }
  const auto ns = namespace_of(r.namespace_id);
  auto audit = audit_event(r.actor, r.origin, "definitions.register", std::move(target),
                           {{"taskDefs", std::move(task_names)},
                            {"workflowDefs", std::move(workflow_names)}});
  audit.ns = ns;
  auto revisions = store::put_definitions(conn, ns, doc.tasks, doc.workflows, &audit);
  if (!revisions)
    return std::move(revisions.error());
  json::array task_out;
  for (size_t i = 0; i < doc.tasks.size(); ++i)
    task_out.push_back(json::object{{"name", doc.tasks[i].name}, {"revision", (*revisions)[i]}});
  json::array wf_out;
  for (const auto& def : doc.workflows)
    wf_out.push_back(json::object{{"name", def.name}, {"version", def.version}});
  return json::serialize(json::object{{"taskDefs", std::move(task_out)},
                                      {"workflowDefs", std::move(wf_out)}});
}

caf::expected<std::string> definitions(store::connection& conn, const msg::definitions_query& q) {
  const bool task = q.kind == "task";
  const auto ns = namespace_of(q.namespace_id);
  if (q.op == "delete") {
    auto audit = audit_event(q.actor, q.origin, "definitions.delete",
                             task ? "task:" + q.name
                                  : "workflow:" + q.name + "@" + std::to_string(q.version));
    audit.ns = ns;
    auto done = task ? store::delete_task_def(conn, ns, q.name, &audit)
                     : store::delete_workflow_def(conn, ns, q.name, q.version, &audit);
    if (!done)
      return std::move(done.error());
    json::object what{{"kind", q.kind}, {"name", q.name}};
    if (!task)
      what["version"] = q.version;
    return json::serialize(json::object{{"deleted", std::move(what)}});
  }
  if (!task) {
    if (q.op == "list") {
      auto defs = store::load_all_workflow_defs(conn, ns);
      if (!defs)
        return std::move(defs.error());
      json::array out;
      for (const auto& d : *defs)
        out.push_back(flow::to_json(d));
      return json::serialize(out);
    }
    auto def = store::load_workflow_def(conn, ns, q.name,
                                        q.version > 0 ? std::optional<int64_t>{q.version}
                                                      : std::nullopt);
    if (!def)
      return std::move(def.error());
    return json::serialize(flow::to_json(*def));
  }
  auto defs = store::load_task_defs(conn, ns);
  if (!defs)
    return std::move(defs.error());
  if (q.op == "list") {
    json::array out;
    for (const auto& [name, d] : *defs)
      out.push_back(flow::to_json(d));
    return json::serialize(out);
  }
  auto it = defs->find(q.name);
  if (it == defs->end())
    return nf::make_error(nf::errc::not_found,
                          "task definition " + flow::quoted(q.name) + " not found");
  return json::serialize(flow::to_json(it->second));
}

caf::expected<std::string> get_execution(store::connection& conn, const msg::workflow_query& q) {
  auto snaps = store::perform(conn, [&](store::transaction& tx) {
    return store::load_snapshots(tx, {workflow_id{q.workflow_id}});
  });
  if (!snaps)
    return std::move(snaps.error());
  if (snaps->empty() || snaps->front().ns != namespace_of(q.namespace_id))
    return workflow_not_found(q.workflow_id);
  return json::serialize(execution_json(snaps->front(), q.include_tasks));
}

namespace {

store::execution_search search_of(const msg::search_request& r) {
  store::execution_search q;
  q.ns = namespace_of(r.namespace_id);
  if (!r.status.empty())
    q.status = flow::parse_workflow_status(r.status);
  if (!r.workflow_name.empty())
    q.workflow_name = r.workflow_name;
  if (!r.correlation_id.empty())
    q.correlation_id = r.correlation_id;
  if (r.started_after_ms > 0)
    q.started_after_ms = r.started_after_ms;
  if (r.started_before_ms > 0)
    q.started_before_ms = r.started_before_ms;
  if (!r.cursor.empty())
    q.after = workflow_id{r.cursor};
  q.limit = r.limit;
  return q;
}

} // namespace

caf::expected<std::string> count_executions(store::connection& conn,
                                            const msg::search_request& r) {
  auto counts = store::count_executions(conn, search_of(r), execution_count_cap);
  if (!counts)
    return std::move(counts.error());
  json::object by_status;
  for (const auto& [status, n] : *counts)
    by_status[status] = n;
  return json::serialize(
    json::object{{"counts", std::move(by_status)}, {"cap", execution_count_cap}});
}

caf::expected<msg::search_page> search_executions(store::connection& conn,
                                                  const msg::search_request& r) {
  auto page = store::search_executions(conn, search_of(r));
  if (!page)
    return std::move(page.error());
  json::array items;
  for (const auto& s : page->items)
    items.push_back(json::object{
      {"workflowId", s.id.str()},
      {"workflowName", s.workflow_name},
      {"workflowVersion", s.workflow_version},
      {"status", std::string{flow::to_string(s.status)}},
      {"startTime", s.started_at_ms},
      {"endTime", opt(s.ended_at_ms)},
      {"correlationId", opt(s.correlation_id)},
      {"reasonForIncompletion", opt(s.reason_for_incompletion)},
    });
  msg::search_page out;
  out.items_json = json::serialize(items);
  if (page->next)
    out.next_cursor = page->next->str();
  return out;
}

caf::expected<std::string> deliver_signal(store::connection& conn, const msg::signal_request& r) {
  json::value payload = nullptr;
  if (!r.payload_json.empty()) {
    json::error_code ec;
    payload = json::parse(r.payload_json, ec);
    if (ec)
      return nf::make_error(nf::errc::invalid, "payload: expected JSON (" + ec.message() + ")");
  }
  if (auto in = check_in_namespace(conn, r.namespace_id, r.workflow_id); !in)
    return std::move(in.error());
  // The workflow's namespace is filled in by the store, which reads the workflow.
  auto audit = audit_event(r.actor, r.origin, "workflow.signal", r.workflow_id,
                           {{"signal", r.name}});
  json::object answer{{"workflowId", r.workflow_id}, {"signal", r.name}, {"delivered", true}};
  std::optional<std::string> earlier;
  std::optional<store::request_claim> claim;
  if (!r.request_id.empty())
    claim = store::request_claim{r.request_id, "signal " + r.name, answer, &earlier};
  if (auto d = store::deliver_signal(conn, workflow_id{r.workflow_id}, r.name, payload, &audit,
                                     claim ? &*claim : nullptr);
      !d)
    return std::move(d.error());
  // A retry is answered as the first request was, and applies nothing (migration 0037).
  return earlier ? *earlier : json::serialize(answer);
}

caf::expected<std::string> record_task_progress(store::connection& conn,
                                                const msg::task_progress& r) {
  // The api checked both texts (net/api/checks.cpp); parsed again here, never trusted.
  json::error_code ec;
  auto logs = json::parse(r.logs_json, ec);
  if (ec || !logs.is_array())
    return nf::make_error(nf::errc::invalid, "logs: expected an array of log lines");
  json::object payload{{"taskId", r.task_id}, {"logs", std::move(logs)}};
  if (!r.output_json.empty()) {
    auto output = json::parse(r.output_json, ec);
    if (ec || !output.is_object())
      return nf::make_error(nf::errc::invalid, "output: expected a JSON object");
    payload["outputData"] = std::move(output);
  }
  if (auto in = check_in_namespace(conn, r.namespace_id, r.workflow_id); !in)
    return std::move(in.error());
  if (auto d = store::record_task_progress(conn, workflow_id{r.workflow_id}, task_id{r.task_id},
                                           payload);
      !d)
    return std::move(d.error());
  return json::serialize(
    json::object{{"workflowId", r.workflow_id}, {"taskId", r.task_id}, {"recorded", true}});
}

caf::expected<std::string> update_task_by_ref(store::connection& conn,
                                              const msg::task_ref_update& r) {
  json::error_code ec;
  auto output = json::parse(r.output_json, ec);
  if (ec || !output.is_object())
    return nf::make_error(nf::errc::invalid, "output: expected a JSON object");
  if (auto in = check_in_namespace(conn, r.namespace_id, r.workflow_id); !in)
    return std::move(in.error());
  json::object details{{"taskRef", r.task_ref}, {"status", r.status}};
  if (!r.worker_id.empty())
    details["workerId"] = r.worker_id;
  auto audit = audit_event(r.actor, r.origin, "workflow.task_update", r.workflow_id,
                           std::move(details));
  std::optional<store::request_claim> claim;
  if (!r.request_id.empty())
    claim = store::request_claim{r.request_id, "task_update " + r.task_ref + " " + r.status, {},
                                 nullptr};
  // A retry gets the task the first request completed (the answer below is built from it).
  auto d = store::deliver_task_update(conn, workflow_id{r.workflow_id}, r.task_ref, r.status,
                                      output, r.worker_id, &audit, claim ? &*claim : nullptr);
  if (!d)
    return std::move(d.error());
  return json::serialize(json::object{{"workflowId", r.workflow_id},
                                      {"taskRef", r.task_ref},
                                      {"taskId", d->str()},
                                      {"status", r.status}});
}

caf::expected<int64_t> heartbeat(store::connection& conn, const msg::heartbeat_request& r,
                                 int default_lease_seconds) {
  workflow_id wf{r.workflow_id};
  task_id task{r.task_id};
  auto secs = store::task_response_timeout(conn, wf, task, namespace_of(r.namespace_id));
  if (!secs)
    return std::move(secs.error());
  if (r.callback_after_seconds > 0)
    return store::postpone_lease(conn, store::postponed_lease{wf, task, lease_token{r.lease_token},
                                                             r.callback_after_seconds});
  store::heartbeat_request req{wf, task, lease_token{r.lease_token},
                               secs->value_or(default_lease_seconds)};
  return store::heartbeat_task(conn, req);
}

caf::expected<std::vector<msg::event_view>> read_events(store::connection& conn,
                                                        const msg::events_request& r,
                                                        bool scoped) {
  workflow_id wf{r.workflow_id};
  // First, so that another namespace's history is never read (and an unknown workflow is
  // told apart from a quiet one).
  if (scoped)
    if (auto in = check_in_namespace(conn, r.namespace_id, r.workflow_id); !in)
      return std::move(in.error());
  auto rows = store::read_events(conn, wf, r.after_seq, r.limit);
  if (!rows)
    return std::move(rows.error());
  // Nothing new: tell an unknown workflow apart from a quiet one.
  if (!scoped && rows->empty())
    if (auto h = store::read_execution_header(conn, wf); !h)
      return std::move(h.error());
  std::vector<msg::event_view> out;
  out.reserve(rows->size());
  for (auto& e : *rows)
    out.push_back({e.seq, e.at_ms, std::move(e.type), e.ref_name.value_or(""),
                   std::move(e.payload)});
  return out;
}

caf::expected<std::string> database_readiness(store::connection& conn) {
  auto report = store::readiness(conn);
  if (!report)
    return std::move(report.error());
  json::array lines;
  for (const auto& l : report->lines)
    lines.emplace_back(l);
  return json::serialize(json::object{{"ready", report->ready}, {"lines", std::move(lines)}});
}

caf::expected<std::string> store_status(store::connection& conn, int64_t silent_after_ms) {
  auto gauges = store::read_store_gauges(conn);
  if (!gauges)
    return std::move(gauges.error());
  auto pending = store::pending_decisions(conn);
  if (!pending)
    return std::move(pending.error());
  auto cluster = store::read_cluster_view(conn);
  if (!cluster)
    return std::move(cluster.error());
  json::array queues;
  for (const auto& q : gauges->queues)
    queues.push_back(json::object{{"name", q.queue},
                                  {"ready", q.ready},
                                  {"leased", q.leased},
                                  {"oldestReadyAgeMs", opt(q.oldest_ready_ms)}});
  json::object by_shard;
  int64_t total = 0;
  for (const auto& [shard, n] : *pending) {
    by_shard[std::to_string(shard)] = n;
    total += n;
  }
  json::array nodes;
  for (const auto& n : cluster->nodes)
    nodes.push_back(json::object{{"id", n.id},
                                 {"address", n.address},
                                 {"startedAt", n.started_at_ms},
                                 {"heartbeatAgeMs", n.heartbeat_age_ms},
                                 {"stopped", n.stopped},
                                 {"alive", !n.stopped && n.heartbeat_age_ms < silent_after_ms},
                                 {"partitions", n.partitions}});
  json::array partitions;
  for (const auto& p : cluster->partitions)
    partitions.push_back(json::object{{"partition", p.partition},
                                      {"owner", p.owner},
                                      {"epoch", p.epoch},
                                      {"leaseRemainingMs", p.lease_remaining_ms},
                                      {"heldMs", p.held_ms}});
  return json::serialize(json::object{
    {"queues", std::move(queues)},
    {"queueCountCap", store::metrics_count_cap},
    {"pendingDecisions", json::object{{"total", total}, {"byShard", std::move(by_shard)}}},
    {"nodes", std::move(nodes)},
    {"partitions", std::move(partitions)}});
}

caf::expected<std::string> dead_letters(store::connection& conn,
                                        const msg::deadletter_request& r) {
  const auto ns = namespace_of(r.namespace_id);
  if (r.op == "replay") {
    std::string target;
    for (auto id : r.ids)
      target += (target.empty() ? "" : ",") + std::to_string(id);
    auto audit =
      audit_event(r.actor, r.origin, "deadletters.replay", r.ids.empty() ? "all" : target);
    audit.ns = ns;
    auto n = store::replay_dead_letters_audited(conn, r.ids, ns, std::move(audit));
    if (!n)
      return std::move(n.error());
    return json::serialize(json::object{{"replayed", *n}});
  }
  std::optional<store::dead_letter_cursor> after;
  if (r.after_id > 0) {
    auto pos = store::dead_letter_position(conn, r.after_id, ns);
    if (!pos)
      return std::move(pos.error());
    after = *pos;
  }
  auto page = store::list_dead_letters(conn, after, r.limit, ns);
  if (!page)
    return std::move(page.error());
  json::array items;
  for (const auto& e : page->events)
    items.push_back(json::object{
      {"id", e.id},
      {"eventId", e.event.str()},
      {"eventType", e.event_type},
      {"workflowId", opt_id(e.workflow)},
      {"attempts", e.attempts},
      {"lastError", opt(e.last_error)},
      {"payload", stored(e.payload)},
    });
  json::value next = nullptr;
  if (page->next)
    next = page->next->id;
  return json::serialize(json::object{{"deadLetters", std::move(items)}, {"nextAfterId", next}});
}

caf::expected<std::string> resolve_namespace(store::connection& conn, const std::string& name) {
  auto row = store::find_namespace(conn, name.empty() ? std::string{"default"} : name);
  if (!row)
    return std::move(row.error());
  return row->id.str();
}

caf::expected<std::string> namespaces(store::connection& conn, const msg::namespace_request& r) {
  auto row_json = [](const store::namespace_row& n) {
    return json::object{{"name", n.name}, {"createdTime", n.created_at_ms}};
  };
  // Namespaces are the cluster's, not any one namespace's: their records name none.
  auto audit = audit_event(r.actor, r.origin, "namespaces." + r.op, "namespace:" + r.name);
  if (r.op == "create") {
    auto n = store::audited(
      conn, [&](store::connection& c) { return store::create_namespace(c, r.name); },
      [&](const store::namespace_row&) { return audit; });
    if (!n)
      return std::move(n.error());
    return json::serialize(row_json(*n));
  }
  if (r.op == "remove") {
    if (auto d = store::remove_namespace(conn, r.name, &audit); !d)
      return std::move(d.error());
    return json::serialize(json::object{{"removed", r.name}});
  }
  auto all = store::list_namespaces(conn);
  if (!all)
    return std::move(all.error());
  json::array out;
  for (const auto& n : *all)
    out.push_back(row_json(n));
  return json::serialize(json::object{{"namespaces", std::move(out)}});
}

} // namespace nf::engine
