// Conductor's metadata routes: task and workflow definitions, registered through the
// client protocol's register (one transaction, every problem named) and listed, read and
// deleted through its definitions query.

#include <boost/json.hpp>

#include "flow/parse.hpp"
#include "net/web/errors.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;


auto fail_with(const exchange_ptr& ex) {
  return [ex](caf::error& e) { ex->fail(e); };
}

msg::definitions_query query_of(const char* op, const char* kind, std::string name = {},
                                int64_t version = 0) {
  msg::definitions_query q;
  q.op = op;
  q.kind = kind;
  q.name = std::move(name);
  q.version = version;
  return q;
}

// The register path reads a definition's kind from its fields; a route for one kind
// refuses the other instead of registering it.
bool refuse_kind(const exchange_ptr& ex, const json::value& v, const std::string& path,
                 bool want_workflow) {
  const auto* o = v.if_object();
  if (o == nullptr) {
    ex->fail(400, path + ": expected a " + (want_workflow ? "workflow" : "task")
                    + " definition (a JSON object)",
             path);
    return true;
  }
  if (flow::looks_like_workflow(*o) != want_workflow) {
    ex->fail(400, path + ": expected a " + (want_workflow ? "workflow" : "task")
                    + " definition, got a "
                    + (want_workflow ? "task definition (no tasks)" : "workflow definition"),
             want_workflow ? (path == "body" ? "tasks" : path + ".tasks") : path);
    return true;
  }
  return false;
}

msg::definitions_registration registration_of(const exchange_ptr& ex, std::string text) {
  msg::definitions_registration r;
  r.text = std::move(text);
  return scoped(ex, std::move(r));
}

msg::definitions_registration registration_of(const exchange_ptr& ex) {
  return registration_of(ex, ex->body());
}

void register_text(gateway* api, const exchange_ptr& ex, std::string text) {
  api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); }, fail_with(ex),
                        register_atom_v, registration_of(ex, std::move(text)));
}

void register_text(gateway* api, const exchange_ptr& ex) {
  register_text(api, ex, ex->body());
}

// Orkes' clients send `metadata=false` with every read of a definition; `true` asks for tags
// and access metadata, which nodeflow does not keep.
param_doc metadata_param() {
  return {"metadata", "false only: nodeflow keeps no tags or access metadata on a definition",
          false, "boolean"};
}

bool metadata_param_ok(const exchange_ptr& ex) {
  auto m = query_bool(ex, "metadata", false);
  if (!m)
    return false;
  if (*m) {
    ex->fail(400, "metadata=true: nodeflow keeps no tags or access metadata on a definition "
                  "(leave it out or send false)",
             "metadata");
    return false;
  }
  return true;
}

// `newVersion=true`: the definition is registered as the version after the latest of its
// name (1 when there is none), whatever version it names.
void register_next_version(gateway* api, const exchange_ptr& ex, json::object def) {
  std::string name{def.at("name").as_string()};
  auto with_version = [api, ex, def](int64_t v) mutable {
    def["version"] = v;
    register_text(api, ex, json::serialize(def));
  };
  api->ask<std::string>(
    [ex, with_version](std::string& latest) mutable {
      json::error_code ec;
      auto v = json::parse(latest, ec);
      const auto* version = !ec && v.is_object() ? v.as_object().if_contains("version") : nullptr;
      if (version == nullptr || !version->is_int64()) {
        ex->fail(500, "the latest definition read back has no version");
        return;
      }
      with_version(version->as_int64() + 1);
    },
    [ex, with_version](caf::error& e) mutable {
      if (status_of(e) == 404)
        with_version(1);
      else
        ex->fail(e);
    },
    definitions_atom_v, scoped(ex, query_of("get", "workflow", name, 0)));
}

void add_task_def_routes(router& r, gateway* api, json_limits lim) {
  r.add({verb::post, "/api/metadata/taskdefs",
         "Create or update task definitions, all of them or (on any problem) none", {},
         body_kind::json, "an array of TaskDef",
         "{\"taskDefs\":[{\"name\",\"revision\"}],\"workflowDefs\":[]}", "metadata", access::admin,
         [api, lim](const exchange_ptr& ex) {
           auto body = read_json_body(ex, lim);
           if (!body)
             return;
           const auto* arr = body->if_array();
           if (arr == nullptr || arr->empty()) {
             ex->fail(400, "body: expected a non-empty array of task definitions", "body");
             return;
           }
           for (size_t i = 0; i < arr->size(); ++i)
             if (refuse_kind(ex, (*arr)[i], "[" + std::to_string(i) + "]", false))
               return;
           register_text(api, ex);
         }});
  r.add({verb::put, "/api/metadata/taskdefs", "Update an existing task definition", {},
         body_kind::json, "one TaskDef (404 when none has its name)",
         "{\"taskDefs\":[{\"name\",\"revision\"}],\"workflowDefs\":[]}", "metadata", access::admin,
         [api, lim](const exchange_ptr& ex) {
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           if (refuse_kind(ex, *body, "body", false))
             return;
           const auto* name = body->if_contains("name");
           if (name == nullptr || !name->is_string() || name->as_string().empty()) {
             ex->fail(400, "name: expected the task definition's name", "name");
             return;
           }
           // Conductor updates only what exists: read it first (a definition deleted
           // between the read and the write is registered again, as a POST would).
           api->ask<std::string>(
             [api, ex](std::string&) { register_text(api, ex); }, fail_with(ex),
             definitions_atom_v,
             scoped(ex, query_of("get", "task", std::string{name->as_string()})));
         }});
  r.add({verb::get, "/api/metadata/taskdefs", "Every task definition, by name", {},
         body_kind::none, {}, "an array of TaskDef", "metadata", access::reader,
         [api](const exchange_ptr& ex) {
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), definitions_atom_v,
                                 scoped(ex, query_of("list", "task")));
         }});
  r.add({verb::get, "/api/metadata/taskdefs/{tasktype}", "One task definition",
         {metadata_param()}, body_kind::none, {}, "a TaskDef (404 when there is none)",
         "metadata", access::reader, [api](const exchange_ptr& ex) {
           if (!metadata_param_ok(ex))
             return;
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), definitions_atom_v,
                                 scoped(ex, query_of("get", "task", ex->param("tasktype"))));
         }});
  r.add({verb::get, "/api/metadata/taskdefs/{tasktype}/executions",
         "The executions of a task definition, newest scheduled first, a page at a time",
         {{"limit", "at most this many (1 … 1000, default 100)", false, "integer"},
          {"before", "the \"next\" of the previous page (absent: the newest)", false, "string"}},
         body_kind::none, {},
         "{\"taskDefName\",\"executions\":[{\"taskId\",\"workflowInstanceId\","
         "\"referenceTaskName\",\"iteration\",\"retryCount\",\"taskType\",\"status\","
         "\"scheduledTime\",\"startTime\",\"endTime\",\"workerId\","
         "\"reasonForIncompletion\"}],\"next\":cursor|null}",
         "metadata", access::reader, [api](const exchange_ptr& ex) {
           auto limit = query_int(ex, "limit", 100, 1, 1000);
           if (!limit)
             return;
           msg::task_history_query q;
           q.task_def_name = ex->param("tasktype");
           q.limit = static_cast<int32_t>(*limit);
           if (const auto* before = ex->query("before")) {
             if (before->empty()) {
               ex->fail(400, "before: expected the \"next\" of a previous page, got nothing",
                        "before");
               return;
             }
             q.cursor = *before;
           }
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), task_history_atom_v, scoped(ex, std::move(q)));
         }});
  r.add({verb::delete_, "/api/metadata/taskdefs/{tasktype}",
         "Delete a task definition no workflow definition uses (409 naming those that do)",
         {}, body_kind::none, {}, "{\"deleted\":{\"kind\":\"task\",\"name\"}}", "metadata", access::admin,
         [api](const exchange_ptr& ex) {
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), definitions_atom_v,
                                 scoped(ex, query_of("delete", "task", ex->param("tasktype"))));
         }});
}

void add_workflow_def_routes(router& r, gateway* api, json_limits lim) {
  r.add({verb::post, "/api/metadata/workflow",
         "Create a workflow definition (409 when its name and version exist, unless "
         "overwrite=true)",
         {{"overwrite",
           "true: replace the definition when its name and version exist (default false: 409)",
           false, "boolean"},
          {"newVersion",
           "true: register it as the version after the latest of its name (1 when none), "
           "whatever version it names; the answer names the version",
           false, "boolean"}},
         body_kind::json, "one WorkflowDef (version absent = 1)",
         "{\"taskDefs\":[],\"workflowDefs\":[{\"name\",\"version\"}]}", "metadata", access::admin,
         [api, lim](const exchange_ptr& ex) {
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           if (refuse_kind(ex, *body, "body", true))
             return;
           const auto* name = body->if_contains("name");
           const auto* version = body->if_contains("version");
           if (name == nullptr || !name->is_string() || name->as_string().empty()) {
             ex->fail(400, "name: expected the workflow definition's name", "name");
             return;
           }
           if (version != nullptr && (!version->is_int64() || version->as_int64() < 1)) {
             ex->fail(400, "version: expected an integer >= 1", "version");
             return;
           }
           auto overwrite = query_bool(ex, "overwrite", false);
           auto next_version = overwrite ? query_bool(ex, "newVersion", false) : std::nullopt;
           if (!next_version)
             return;
           if (*next_version)
             return register_next_version(api, ex, *body);
           if (*overwrite)
             return register_text(api, ex);
           int64_t v = version != nullptr ? version->as_int64() : 1;
           // Whether it exists, then the write: two creates racing may both pass the read,
           // and the second then updates the first (as PUT would).
           std::string n{name->as_string()};
           api->ask<std::string>(
             [ex, n, v](std::string&) {
               ex->fail(409, "workflow definition \"" + n + "\" version " + std::to_string(v)
                               + " already exists: update it with PUT /api/metadata/workflow");
             },
             [api, ex](caf::error& e) {
               if (status_of(e) == 404)
                 register_text(api, ex);
               else
                 ex->fail(e);
             },
             definitions_atom_v, scoped(ex, query_of("get", "workflow", n, v)));
         }});
  r.add({verb::put, "/api/metadata/workflow",
         "Create or update workflow definitions, all of them or (on any problem) none",
         {{"overwrite", "true only (the default): an update replaces what exists", false,
           "boolean"}},
         body_kind::json, "an array of WorkflowDef",
         "Conductor's BulkResponse: {\"bulkSuccessfulResults\":[name…],"
         "\"bulkErrorResults\":{}}",
         "metadata", access::admin, [api, lim](const exchange_ptr& ex) {
           auto overwrite = query_bool(ex, "overwrite", true);
           if (!overwrite)
             return;
           if (!*overwrite) {
             ex->fail(400, "overwrite=false: an update replaces what exists; create a "
                           "definition without replacing one with POST /api/metadata/workflow",
                      "overwrite");
             return;
           }
           auto body = read_json_body(ex, lim);
           if (!body)
             return;
           const auto* arr = body->if_array();
           if (arr == nullptr || arr->empty()) {
             ex->fail(400, "body: expected a non-empty array of workflow definitions", "body");
             return;
           }
           for (size_t i = 0; i < arr->size(); ++i)
             if (refuse_kind(ex, (*arr)[i], "[" + std::to_string(i) + "]", true))
               return;
           api->ask<std::string>(
             [ex](std::string& t) {
               json::error_code ec;
               auto v = json::parse(t, ec);
               json::array names;
               if (!ec && v.is_object())
                 if (const auto* defs = v.as_object().if_contains("workflowDefs"))
                   if (defs->is_array())
                     for (const auto& d : defs->as_array())
                       if (d.is_object())
                         names.push_back(d.as_object().at("name"));
               ex->respond_json(200, json::object{{"bulkSuccessfulResults", std::move(names)},
                                                  {"bulkErrorResults", json::object{}}});
             },
             fail_with(ex), register_atom_v, registration_of(ex));
         }});
  r.add({verb::get, "/api/metadata/workflow/{name}", "One workflow definition",
         {{"version", "the version (absent: the latest)", false, "integer"}, metadata_param()},
         body_kind::none, {}, "a WorkflowDef (404 when there is none)", "metadata",
         access::reader, [api](const exchange_ptr& ex) {
           if (!metadata_param_ok(ex))
             return;
           auto version = query_int(ex, "version", 0, 1, INT32_MAX);
           if (!version)
             return;
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), definitions_atom_v,
                                 scoped(ex, query_of("get", "workflow", ex->param("name"),
                                                     *version)));
         }});
  r.add({verb::get, "/api/metadata/workflow",
         "Every version of every workflow definition, by name then version", {},
         body_kind::none, {}, "an array of WorkflowDef", "metadata", access::reader,
         [api](const exchange_ptr& ex) {
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), definitions_atom_v,
                                 scoped(ex, query_of("list", "workflow")));
         }});
  r.add({verb::delete_, "/api/metadata/workflow/{name}/{version}",
         "Delete one version of a workflow definition (409 while executions of it run)", {},
         body_kind::none, {}, "{\"deleted\":{\"kind\":\"workflow\",\"name\",\"version\"}}",
         "metadata", access::admin, [api](const exchange_ptr& ex) {
           const auto& text = ex->param("version");
           int64_t version = 0;
           bool ok = !text.empty() && text.size() < 10;
           for (char c : text)
             ok = ok && c >= '0' && c <= '9';
           if (ok)
             version = std::stoll(text);
           if (!ok || version < 1) {
             ex->fail(400, "version: expected an integer >= 1, got \"" + text + "\"", "version");
             return;
           }
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), definitions_atom_v,
                                 scoped(ex, query_of("delete", "workflow", ex->param("name"),
                                                     version)));
         }});
}

} // namespace

void add_metadata_routes(router& r, const route_context& ctx) {
  add_task_def_routes(r, ctx.api, ctx.json);
  add_workflow_def_routes(r, ctx.api, ctx.json);
}

} // namespace nf::net::web
