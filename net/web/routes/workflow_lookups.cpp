// Conductor's lookups of workflows by something other than their id: a workflow's status
// summary, the running workflows of a definition, and the workflows of correlation ids.
// Each is a search or a read of the client protocol, joined here.

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "net/web/conductor_shapes.hpp"
#include "net/web/errors.hpp"
#include "net/web/routes/fan_out.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "proto/errors.hpp"
#include "proto/limits.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// The most ids `running` answers, and the most workflows one correlated lookup reads: each
// is read in full, so the answer stays a bounded amount of work and memory.
constexpr size_t max_running_ids = 100000;
constexpr size_t max_correlated = 1000;
constexpr size_t reads_in_flight = 16;

const json::value& field(const json::object& o, const char* name) {
  static const json::value null_value;
  const auto* v = o.if_contains(name);
  return v ? *v : null_value;
}

// Every page of one search, newest first: `done(items)`, or the error answered; more than
// `cap` items is answered 400 with `too_many`.
struct search_sweep : std::enable_shared_from_this<search_sweep> {
  gateway* api;
  exchange_ptr ex;
  msg::search_request req;
  size_t cap;
  std::string too_many;
  std::vector<json::object> items;
  std::function<void(std::vector<json::object>&)> done;

  void next() {
    auto self = shared_from_this();
    api->ask<msg::search_page>(
      [self](msg::search_page& page) {
        json::error_code ec;
        auto v = json::parse(page.items_json, ec);
        if (!ec && v.is_array())
          for (auto& item : v.as_array())
            if (item.is_object())
              self->items.push_back(std::move(item.as_object()));
        if (self->items.size() > self->cap) {
          self->ex->fail(400, self->too_many);
          return;
        }
        if (page.next_cursor.empty())
          return self->done(self->items);
        self->req.cursor = page.next_cursor;
        self->next();
      },
      fail_with(ex), search_atom_v, scoped(ex, req));
  }
};

void sweep(gateway* api, const exchange_ptr& ex, msg::search_request req, size_t cap,
           std::string too_many, std::function<void(std::vector<json::object>&)> done) {
  auto s = std::make_shared<search_sweep>();
  s->api = api;
  s->ex = ex;
  s->req = std::move(req);
  s->req.limit = 1000;
  s->cap = cap;
  s->too_many = std::move(too_many);
  s->done = std::move(done);
  s->next();
}

// The workflows of several (definition, correlation id) pairs in Conductor's Workflow
// shape, keyed by correlation id: one search per pair, then each execution read.
struct correlated_read : std::enable_shared_from_this<correlated_read> {
  gateway* api;
  exchange_ptr ex;
  std::vector<std::pair<std::string, std::string>> pairs; // (name, correlation id)
  bool include_closed = false;
  bool include_tasks = false;
  std::function<void(json::object&)> done;

  std::mutex m;
  std::vector<std::pair<std::string, std::string>> found; // (correlation id, workflow id)
  std::map<std::string, json::object> shaped;              // by workflow id
  std::string failure;
  unsigned failure_status = 0;

  void fail(unsigned status, std::string message) {
    std::lock_guard<std::mutex> guard{m};
    if (failure_status == 0) {
      failure_status = status;
      failure = std::move(message);
    }
  }

  bool failed() {
    std::lock_guard<std::mutex> guard{m};
    return failure_status != 0;
  }

  void search() {
    auto self = shared_from_this();
    fan_out::run(
      pairs.size(), reads_in_flight,
      [self](size_t i, std::function<void()> next) {
        msg::search_request req;
        req.workflow_name = self->pairs[i].first;
        req.correlation_id = self->pairs[i].second;
        req.limit = static_cast<int32_t>(max_correlated);
        self->api->ask<msg::search_page>(
          [self, i, next](msg::search_page& page) {
            if (!page.next_cursor.empty())
              self->fail(400, "correlationId \"" + self->pairs[i].second + "\" names more than "
                                + std::to_string(max_correlated) + " workflows of "
                                + self->pairs[i].first
                                + ": page them with GET /api/workflow/search");
            json::error_code ec;
            auto v = json::parse(page.items_json, ec);
            if (!ec && v.is_array()) {
              std::lock_guard<std::mutex> guard{self->m};
              for (const auto& item : v.as_array())
                if (const auto* s = item.if_object();
                    s != nullptr && (self->include_closed || is_live(*s)))
                  self->found.emplace_back(self->pairs[i].second,
                                           std::string{field(*s, "workflowId").as_string()});
            }
            next();
          },
          [self, next](caf::error& e) {
            self->fail(status_of(e), nf::message_of(e));
            next();
          },
          search_atom_v, scoped(self->ex, std::move(req)));
      },
      [self] { self->read(); });
  }

  void read() {
    if (failed())
      return answer_failure();
    if (found.size() > max_correlated)
      return ex->fail(400, "the correlation ids name " + std::to_string(found.size())
                             + " workflows, more than the " + std::to_string(max_correlated)
                             + " one request reads: ask for fewer");
    auto self = shared_from_this();
    fan_out::run(
      found.size(), reads_in_flight,
      [self](size_t i, std::function<void()> next) {
        const auto id = self->found[i].second;
        read_execution_or(
          self->api, self->ex, id, self->include_tasks,
          [self, id, next](const json::object& wf) {
            auto shape = workflow_shape(wf, self->include_tasks);
            {
              std::lock_guard<std::mutex> guard{self->m};
              self->shaped.emplace(id, std::move(shape));
            }
            next();
          },
          [self, next](caf::error& e) {
            // Removed since the search (retention): not there, so not answered.
            if (status_of(e) != 404)
              self->fail(status_of(e), nf::message_of(e));
            next();
          });
      },
      [self] { self->answer(); });
  }

  void answer_failure() { ex->fail(failure_status, failure); }

  void answer() {
    if (failed())
      return answer_failure();
    json::object out;
    for (const auto& [name, cid] : pairs)
      out[cid].emplace_array();
    for (const auto& [cid, id] : found)
      if (auto it = shaped.find(id); it != shaped.end())
        out[cid].as_array().push_back(it->second);
    // Newest first, as each search answered, also across the definitions of a batch.
    for (auto& [cid, list] : out) {
      auto& arr = list.as_array();
      std::stable_sort(arr.begin(), arr.end(), [](const json::value& a, const json::value& b) {
        return a.at("startTime").to_number<int64_t>() > b.at("startTime").to_number<int64_t>();
      });
    }
    done(out);
  }
};

// The correlation ids of a body: strings, each at most max_key_bytes, each kept once.
std::optional<std::vector<std::string>> correlation_ids(const exchange_ptr& ex,
                                                        const json::value& v,
                                                        const std::string& path) {
  if (!v.is_array()) {
    ex->fail(400, path + ": expected an array of correlation ids", path);
    return std::nullopt;
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto& arr = v.as_array();
  if (arr.size() > max_correlated) {
    ex->fail(400, path + ": at most " + std::to_string(max_correlated) + " correlation ids, got "
                    + std::to_string(arr.size()),
             path);
    return std::nullopt;
  }
  for (size_t i = 0; i < arr.size(); ++i) {
    auto at = path + "[" + std::to_string(i) + "]";
    if (!arr[i].is_string() || arr[i].as_string().empty()
        || arr[i].as_string().size() > max_key_bytes) {
      ex->fail(400, at + ": expected a correlation id (1 … " + std::to_string(max_key_bytes)
                      + " bytes of text)",
               at);
      return std::nullopt;
    }
    std::string cid{arr[i].as_string()};
    if (seen.insert(cid).second)
      out.push_back(std::move(cid));
  }
  return out;
}

struct correlated_flags {
  bool include_closed;
  bool include_tasks;
};

std::optional<correlated_flags> read_flags(const exchange_ptr& ex) {
  auto closed = query_bool(ex, "includeClosed", false);
  if (!closed)
    return std::nullopt;
  auto tasks = query_bool(ex, "includeTasks", false);
  if (!tasks)
    return std::nullopt;
  return correlated_flags{*closed, *tasks};
}

void read_correlated(gateway* api, const exchange_ptr& ex,
                     std::vector<std::pair<std::string, std::string>> pairs,
                     correlated_flags flags, std::function<void(json::object&)> done) {
  auto r = std::make_shared<correlated_read>();
  r->api = api;
  r->ex = ex;
  r->pairs = std::move(pairs);
  r->include_closed = flags.include_closed;
  r->include_tasks = flags.include_tasks;
  r->done = std::move(done);
  r->search();
}

const std::vector<param_doc> correlated_params{
  {"includeClosed", "true: ended workflows too (default false: RUNNING and PAUSED only)", false,
   "boolean"},
  {"includeTasks", "true: each workflow with its tasks (default false)", false, "boolean"}};

} // namespace

void add_workflow_lookup_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::get, "/api/workflow/{workflowId}/status",
         "A workflow's status, and its output and variables when asked (Conductor's "
         "WorkflowStatus)",
         {{"includeOutput", "true: the workflow's output too (default false)", false, "boolean"},
          {"includeVariables", "true: its variables too (default false)", false, "boolean"}},
         body_kind::none, {}, "{workflowId, correlationId, status, output?, variables?}",
         "workflow", access::reader, [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto output = query_bool(ex, "includeOutput", false);
           if (!output)
             return;
           auto variables = query_bool(ex, "includeVariables", false);
           if (!variables)
             return;
           read_execution_or(
             api, ex, id, false,
             [ex, output = *output, variables = *variables](const json::object& wf) {
               json::object o;
               o["workflowId"] = field(wf, "workflowId");
               o["correlationId"] = field(wf, "correlationId");
               o["status"] = field(wf, "status");
               if (output)
                 o["output"] = field(wf, "output");
               if (variables)
                 o["variables"] = field(wf, "variables");
               ex->respond_json(200, o);
             },
             fail_with(ex));
         }});
  r.add({verb::get, "/api/workflow/running/{name}",
         "The ids of a definition's running (and paused) workflows, newest first; with "
         "startTime and endTime, those started between them in any status",
         {{"version", "the definition's version (default 1, as Conductor's)", false, "integer"},
          {"startTime", "epoch ms: started at or after (with endTime)", false, "integer"},
          {"endTime", "epoch ms: started at or before (with startTime)", false, "integer"}},
         body_kind::none, {}, "[workflowId]", "workflow", access::reader,
         [api](const exchange_ptr& ex) {
           auto version = query_int(ex, "version", 1, 1, INT32_MAX);
           if (!version)
             return;
           auto from = query_int(ex, "startTime", 0, 0, INT64_MAX);
           if (!from)
             return;
           auto to = query_int(ex, "endTime", 0, 0, INT64_MAX);
           if (!to)
             return;
           bool ranged = *from != 0 || *to != 0;
           if (ranged && (*from == 0 || *to == 0 || *to < *from)) {
             ex->fail(400, "startTime, endTime: give both, with startTime <= endTime, or neither",
                      *from == 0 ? "startTime" : "endTime");
             return;
           }
           msg::search_request req;
           req.workflow_name = ex->param("name");
           if (ranged) {
             req.started_after_ms = *from;
             req.started_before_ms = *to + 1;
           }
           auto name = req.workflow_name;
           auto want = *version;
           sweep(api, ex, std::move(req), max_running_ids,
                 "more than " + std::to_string(max_running_ids) + " workflows of " + name
                   + ": page them with GET /api/workflow/search",
                 [ex, ranged, want](std::vector<json::object>& items) {
                   json::array ids;
                   for (const auto& s : items) {
                     const auto& v = field(s, "workflowVersion");
                     if (!v.is_number() || v.to_number<int64_t>() != want)
                       continue;
                     if (ranged || is_live(s))
                       ids.push_back(field(s, "workflowId"));
                   }
                   ex->respond_json(200, ids);
                 });
         }});
  r.add({verb::get, "/api/workflow/{name}/correlated/{correlationId}",
         "A definition's workflows under one correlation id, newest first", correlated_params,
         body_kind::none, {}, "[Workflow]", "workflow", access::reader,
         [api](const exchange_ptr& ex) {
           auto flags = read_flags(ex);
           if (!flags)
             return;
           auto cid = ex->param("correlationId");
           read_correlated(api, ex, {{ex->param("name"), cid}}, *flags,
                           [ex, cid](json::object& out) {
                             ex->respond_json(200, out[cid]);
                           });
         }});
  r.add({verb::post, "/api/workflow/{name}/correlated",
         "A definition's workflows under each of several correlation ids", correlated_params,
         body_kind::json, "[correlationId] (at most 1000)",
         "{\"<correlationId>\": [Workflow], …}, newest first", "workflow", access::reader,
         [api, lim](const exchange_ptr& ex) {
           auto flags = read_flags(ex);
           if (!flags)
             return;
           auto body = read_json_body(ex, lim);
           if (!body)
             return;
           auto ids = correlation_ids(ex, *body, "body");
           if (!ids)
             return;
           std::vector<std::pair<std::string, std::string>> pairs;
           for (auto& cid : *ids)
             pairs.emplace_back(ex->param("name"), std::move(cid));
           read_correlated(api, ex, std::move(pairs), *flags,
                           [ex](json::object& out) { ex->respond_json(200, out); });
         }});
  r.add({verb::post, "/api/workflow/correlated/batch",
         "The workflows of several definitions under each of several correlation ids",
         correlated_params, body_kind::json,
         "{\"workflowNames\": [name], \"correlationIds\": [correlationId]}",
         "{\"<correlationId>\": [Workflow], …}, newest first", "workflow", access::reader,
         [api, lim](const exchange_ptr& ex) {
           auto flags = read_flags(ex);
           if (!flags)
             return;
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           for (const auto& [key, _] : *body)
             if (key != "workflowNames" && key != "correlationIds") {
               std::string k{key};
               ex->fail(400, k + ": unknown field (expected workflowNames and correlationIds)",
                        k);
               return;
             }
           static const json::value none;
           const auto* cids_v = body->if_contains("correlationIds");
           auto cids = correlation_ids(ex, cids_v ? *cids_v : none, "correlationIds");
           if (!cids)
             return;
           const auto* names_v = body->if_contains("workflowNames");
           if (names_v == nullptr || !names_v->is_array() || names_v->as_array().empty()) {
             ex->fail(400, "workflowNames: expected a non-empty array of workflow names",
                      "workflowNames");
             return;
           }
           std::vector<std::string> names;
           for (size_t i = 0; i < names_v->as_array().size(); ++i) {
             const auto& n = names_v->as_array()[i];
             if (!n.is_string() || n.as_string().empty()) {
               auto at = "workflowNames[" + std::to_string(i) + "]";
               ex->fail(400, at + ": expected a workflow name", at);
               return;
             }
             std::string name{n.as_string()};
             if (std::find(names.begin(), names.end(), name) == names.end())
               names.push_back(std::move(name));
           }
           if (names.size() * cids->size() > max_correlated) {
             ex->fail(400, "workflowNames × correlationIds: at most "
                             + std::to_string(max_correlated) + " pairs, got "
                             + std::to_string(names.size() * cids->size()),
                      "correlationIds");
             return;
           }
           std::vector<std::pair<std::string, std::string>> pairs;
           for (const auto& cid : *cids)
             for (const auto& name : names)
               pairs.emplace_back(name, cid);
           read_correlated(api, ex, std::move(pairs), *flags,
                           [ex](json::object& out) { ex->respond_json(200, out); });
         }});
}

} // namespace nf::net::web
