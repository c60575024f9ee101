#include "flow/conductor_fields.hpp"

#include <array>
#include <utility>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "flow/parse.hpp"
#include "flow/validate.hpp"

namespace nf::flow {

namespace {

// What exports and SDKs write for a field they have no value for.
bool is_empty(const boost::json::value& v) {
  if (v.is_null())
    return true;
  if (const auto* s = v.if_string())
    return s->empty();
  if (const auto* a = v.if_array())
    return a->empty();
  if (const auto* o = v.if_object())
    return o->empty();
  return false;
}

// A field another part of the language reads (DECISION's caseValueParam, EVENT's sink,
// …): empty is absent; a value is left for its reader, or reported unknown by finish().
void empty_only(object_reader& r, std::string_view key) {
  if (const auto* v = r.peek(key); v != nullptr && is_empty(*v))
    r.get(key);
}

// A field nodeflow has no way to honour: empty is absent, a value is refused with why.
void refuse_set(object_reader& r, std::string_view key, std::string_view why,
                problems& errs) {
  const auto* v = r.peek(key);
  if (v == nullptr)
    return;
  r.get(key);
  if (!is_empty(*v) && !(v->is_int64() && v->get_int64() == 0)
      && !(v->is_bool() && !v->get_bool()))
    errs.push_back({r.field_path(key), std::string(why)});
}

enum class kind { text, count, object, array, flag };

// A bookkeeping field: its type is checked, its value kept and returned; null is absent.
void keep(object_reader& r, std::string_view key, kind k, boost::json::object& metadata,
          problems& errs) {
  const auto* v = r.get(key);
  if (v == nullptr)
    return;
  std::string expected;
  switch (k) {
    case kind::text:
      if (!v->is_string())
        expected = "a string";
      break;
    case kind::count:
      if (!(v->is_int64() && v->get_int64() >= 0) && !v->is_uint64())
        expected = "a non-negative integer (milliseconds since the epoch)";
      break;
    case kind::object:
      if (!v->is_object())
        expected = "an object";
      break;
    case kind::array:
      if (!v->is_array())
        expected = "an array";
      break;
    case kind::flag:
      if (!v->is_bool())
        expected = "true or false";
      break;
  }
  if (!expected.empty()) {
    errs.push_back({r.field_path(key), "expected " + expected + ", got " + describe(*v)});
    return;
  }
  metadata[key] = *v;
}

// The bookkeeping every definition of Conductor (and Orkes) carries.
void keep_common(object_reader& r, boost::json::object& metadata, problems& errs) {
  keep(r, "ownerApp", kind::text, metadata, errs);
  keep(r, "createTime", kind::count, metadata, errs);
  keep(r, "updateTime", kind::count, metadata, errs);
  keep(r, "createdBy", kind::text, metadata, errs);
  keep(r, "updatedBy", kind::text, metadata, errs);
  keep(r, "accessPolicy", kind::object, metadata, errs);
  keep(r, "tags", kind::array, metadata, errs);
  keep(r, "overwriteTags", kind::flag, metadata, errs);
  keep(r, "inputSchema", kind::object, metadata, errs);
  keep(r, "outputSchema", kind::object, metadata, errs);
  keep(r, "enforceSchema", kind::flag, metadata, errs);
  // Conductor validates against a schema only when one is given and enforceSchema is
  // set (its default is true, so exports carry it without a schema).
  const auto* enforce = metadata.if_contains("enforceSchema");
  if (enforce != nullptr && enforce->is_bool() && enforce->get_bool())
    for (auto field : {"inputSchema", "outputSchema"})
      if (metadata.contains(field))
        errs.push_back({r.field_path(field),
                        "nodeflow does not validate data against a schema: with "
                        "enforceSchema true it would be ignored (set enforceSchema to false "
                        "to keep the schema as documentation)"});
}

void read_cache_config(object_reader& r, workflow_task& t, problems& errs) {
  const auto* v = r.get("cacheConfig");
  if (v == nullptr || is_empty(*v))
    return;
  auto path = r.field_path("cacheConfig");
  const auto* obj = v->if_object();
  if (obj == nullptr) {
    errs.push_back({path, "expected an object {key, ttlInSecond}, got " + describe(*v)});
    return;
  }
  object_reader c(*obj, path, errs);
  c.text("key", t.cache_key, true);
  // Orkes' documentation writes the TTL as a string ("2500"): both spellings are read.
  if (const auto* ttl = c.get("ttlInSecond"); ttl != nullptr && ttl->is_string()) {
    boost::json::value n;
    problems ignored;
    if (parse_json(std::string(ttl->get_string()), n, ignored) && !n.is_string())
      read_count(n, c.field_path("ttlInSecond"), t.cache_ttl_seconds, errs);
    else
      errs.push_back({c.field_path("ttlInSecond"),
                      "expected a number of seconds, got " + describe(*ttl)});
  } else {
    c.count("ttlInSecond", t.cache_ttl_seconds, true);
  }
  if (t.cache_ttl_seconds == 0 && c.get("ttlInSecond") != nullptr)
    errs.push_back({c.field_path("ttlInSecond"), "expected at least 1 second"});
  c.finish("cacheConfig");
}

struct unsupported {
  std::string_view label;
  std::string_view why;
};

// The types of Conductor OSS and Orkes Conductor that need a system nodeflow does not
// have. Types nodeflow may run later are not listed here: they read as unknown.
constexpr std::array<unsupported, 29> unsupported_types{{
  {"KAFKA_PUBLISH", "needs a Kafka broker, which nodeflow does not connect to"},
  {"JDBC", "needs a database connection configured in Conductor, which nodeflow does not "
           "have"},
  {"LLM_TEXT_COMPLETE", "needs an AI model provider integration, which nodeflow does not "
                        "have"},
  {"LLM_CHAT_COMPLETE", "needs an AI model provider integration, which nodeflow does not "
                        "have"},
  {"LLM_GENERATE_EMBEDDINGS", "needs an AI model provider integration, which nodeflow does "
                              "not have"},
  {"LLM_GET_EMBEDDINGS", "needs an embedding model integration, which nodeflow does not "
                         "have (LLM_STORE_EMBEDDINGS and LLM_SEARCH_EMBEDDINGS take "
                         "embeddings a worker computed)"},
  {"LLM_SEARCH_INDEX", "needs an embedding model integration, which nodeflow does not have "
                       "(LLM_SEARCH_EMBEDDINGS searches with embeddings a worker computed)"},
  {"LLM_INDEX_DOCUMENT", "needs an embedding model integration, which nodeflow does not have "
                         "(LLM_STORE_EMBEDDINGS stores embeddings a worker computed)"},
  {"LLM_INDEX_TEXT", "needs an embedding model integration, which nodeflow does not have "
                     "(LLM_STORE_EMBEDDINGS stores embeddings a worker computed)"},
  {"GET_DOCUMENT", "needs Orkes' document loaders, which nodeflow does not have"},
  {"PARSE_DOCUMENT", "needs Orkes' document loaders, which nodeflow does not have"},
  {"CHUNK_TEXT", "needs Orkes' document loaders, which nodeflow does not have"},
  {"LIST_FILES", "needs Orkes' document loaders, which nodeflow does not have"},
  {"CALL_MCP_TOOL", "needs an MCP server integration, which nodeflow does not have"},
  {"LIST_MCP_TOOLS", "needs an MCP server integration, which nodeflow does not have"},
  {"BUSINESS_RULE", "needs Orkes' rules engine, which nodeflow does not have"},
  {"SENDGRID", "needs a SendGrid account integration, which nodeflow does not have (an HTTP "
               "task can call SendGrid's API)"},
  {"OPSGENIE", "needs an Opsgenie integration, which nodeflow does not have (an HTTP task can "
               "call Opsgenie's API)"},
  {"GRPC", "needs gRPC service registrations, which nodeflow does not have"},
  {"UPDATE_SECRET", "writes Orkes' secret store, which nodeflow's secrets are not (they are "
                    "set with `nodeflow secrets`)"},
  {"GET_SIGNED_JWT", "needs Orkes' JWT signing keys, which nodeflow does not have"},
  {"QUERY_PROCESSOR", "queries Orkes' execution index and metrics, which nodeflow does not "
                      "have"},
  {"UPDATE_TASK", "is not supported: nodeflow updates another task only through its task API"},
  {"WAIT_FOR_WEBHOOK", "needs Orkes' webhook integrations, which nodeflow does not have (a "
                       "WAIT with a signal is nodeflow's way to wait for an outside event)"},
  {"HTTP_POLL", "is not supported: use an HTTP task inside a DO_WHILE"},
  {"TERMINATE_WORKFLOW", "is not supported: nodeflow terminates other workflows only through "
                         "its API"},
  {"JUMP", "is not supported: nodeflow's workflows do not jump between tasks"},
  {"USER_DEFINED", "needs a task implementation compiled into Conductor, which nodeflow does "
                   "not load"},
  {"AWS_LAMBDA", "needs an AWS integration, which nodeflow does not have (an HTTP task can "
                 "call a function URL)"},
}};

}  // namespace

std::optional<std::string> unsupported_task_type(std::string_view label) {
  for (const auto& u : unsupported_types)
    if (u.label == label)
      return std::string(u.label) + " " + std::string(u.why);
  return std::nullopt;
}

void read_conductor_task_fields(object_reader& r, workflow_task& t, problems& errs) {
  r.flag("asyncComplete", t.async_complete);
  r.flag("permissive", t.permissive);
  if (int i = r.choice("joinMode", {"SYNC", "ASYNC"}); i >= 0)
    t.join_mode = i == 0 ? "SYNC" : "ASYNC";
  if (r.get("retryCount") != nullptr) {
    std::int64_t n = 0;
    r.count("retryCount", n);
    t.retry_count = n;
  }
  if (const auto* v = r.get("taskDefinition"))
    t.task_definition = read_task_def(*v, r.field_path("taskDefinition"), errs);
  read_cache_config(r, t, errs);
  if (const auto* v = r.get("rateLimited")) {
    if (v->is_bool())
      t.rate_limited = v->get_bool();
    else
      errs.push_back({r.field_path("rateLimited"), "expected true or false, got " + describe(*v)});
  }
  if (const auto* v = r.get("workflowTaskType"); v != nullptr) {
    const auto* type = r.peek("type");
    std::string_view written = type != nullptr && type->is_string()
                                 ? std::string_view(type->get_string())
                                 : std::string_view("SIMPLE");
    if (!v->is_string() || v->get_string() != written)
      errs.push_back({r.field_path("workflowTaskType"),
                      "expected the task's type (" + std::string(written) + "), got "
                        + describe(*v)});
  }
  refuse_set(r, "onStateChange",
             "nodeflow does not publish task state changes to event queues (its outbox "
             "publishes every task and workflow event to webhook subscriptions)",
             errs);
  refuse_set(r, "joinStatus", "nodeflow does not support joinStatus", errs);
  refuse_set(r, "dynamicForkJoinTasksParam",
             "this deprecated form of FORK_JOIN_DYNAMIC is not supported: use "
             "dynamicForkTasksParam and dynamicForkTasksInputParamName",
             errs);
  // Read by the parts of the language that run DECISION, LAMBDA, DYNAMIC, EVENT and
  // EXCLUSIVE_JOIN: exports write them on every task, empty.
  for (auto key : {"caseValueParam", "caseExpression", "scriptExpression",
                   "dynamicTaskNameParam", "sink", "defaultExclusiveJoinTask"})
    empty_only(r, key);
}

void read_conductor_sub_workflow_fields(object_reader& r, problems& errs) {
  empty_only(r, "taskToDomain");
  refuse_set(r, "workflowDefinition",
             "an inline workflow definition is not supported: register it and name it in "
             "subWorkflowParam.name",
             errs);
  refuse_set(r, "idempotencyKey", "nodeflow does not take an idempotency key for a "
                                  "sub-workflow (each SUB_WORKFLOW task starts one child)",
             errs);
  refuse_set(r, "idempotencyStrategy", "nodeflow does not take an idempotency key for a "
                                       "sub-workflow (each SUB_WORKFLOW task starts one child)",
             errs);
  refuse_set(r, "priority", "nodeflow starts a sub-workflow with its parent's priority", errs);
}

void read_conductor_workflow_fields(object_reader& r, workflow_def& d, problems& errs) {
  r.object("inputTemplate", d.input_template);
  r.flag("workflowStatusListenerEnabled", d.status_listener_enabled);
  refuse_set(r, "workflowStatusListenerSink",
             "nodeflow has no status listener sinks: workflowStatusListenerEnabled publishes "
             "a \"workflow.status_listener\" event to the outbox's webhook subscriptions",
             errs);
  refuse_set(r, "rateLimitConfig", "nodeflow does not limit concurrent executions of a "
                                   "workflow",
             errs);
  refuse_set(r, "cacheConfig", "nodeflow does not cache workflow outputs (task outputs are "
                               "cached through a task's cacheConfig)",
             errs);
  keep_common(r, d.metadata, errs);
  keep(r, "metadata", kind::object, d.metadata, errs);
}

void read_conductor_task_def_fields(object_reader& r, task_def& d, problems& errs) {
  keep_common(r, d.metadata, errs);
  keep(r, "baseType", kind::text, d.metadata, errs);
  refuse_set(r, "isolationGroupId", "nodeflow has no isolated worker pools: workers of a task "
                                    "poll its queue (queueName)",
             errs);
  refuse_set(r, "executionNameSpace", "nodeflow has no execution namespaces: workers of a "
                                      "task poll its queue (queueName)",
             errs);
}

std::string cache_key_of(std::string_view key, const boost::json::object& input) {
  std::string out;
  std::size_t i = 0;
  while (i < key.size()) {
    auto open = key.find("${", i);
    auto close = open == std::string_view::npos ? open : key.find('}', open);
    if (close == std::string_view::npos) {
      out.append(key.substr(i));
      break;
    }
    out.append(key.substr(i, open - i));
    if (const auto* v = input.if_contains(key.substr(open + 2, close - open - 2)))
      out += v->is_string() ? std::string(v->get_string()) : boost::json::serialize(*v);
    i = close + 1;
  }
  return out;
}

void write_metadata(const boost::json::object& metadata, boost::json::object& out) {
  for (const auto& kv : metadata)
    out[kv.key()] = kv.value();
}

void check_conductor_task_fields(const workflow_task& t, const std::string& path,
                                 problems& out) {
  if (t.async_complete && t.type != task_type::simple)
    out.push_back({path_key(path, "asyncComplete"),
                   "nodeflow completes a " + std::string(to_string(t.type))
                     + " task itself; only a worker (SIMPLE) task may complete "
                       "asynchronously"});
  if (!t.join_mode.empty() && t.type != task_type::join)
    out.push_back({path_key(path, "joinMode"), "only allowed on JOIN tasks"});
  if (t.task_definition) {
    auto at = path_key(path, "taskDefinition");
    const auto& d = *t.task_definition;
    auto more = validate(d, at);
    out.insert(out.end(), more.begin(), more.end());
    if (d.name != t.name)
      out.push_back({path_key(at, "name"), "expected the task's name " + quoted(t.name)
                                             + ", got " + quoted(d.name)});
    // These are read from the registered definition when a worker leases the task or
    // reports its output, not from the workflow: set there, they would be ignored here.
    constexpr const char* lease =
      " is read from the registered task definition when a worker leases the task: "
      "register it there";
    auto refuse = [&](bool set, std::string_view field) {
      if (set)
        out.push_back({path_key(at, field), std::string(field) + lease});
    };
    refuse(d.timeout_seconds > 0, "timeoutSeconds");
    refuse(d.response_timeout_seconds > 0, "responseTimeoutSeconds");
    refuse(d.rate_limit_per_frequency > 0, "rateLimitPerFrequency");
    refuse(d.concurrent_exec_limit > 0, "concurrentExecLimit");
    refuse(!d.secret_output_fields.empty(), "secretOutputFields");
  }
  if (t.cache_ttl_seconds > 0) {
    auto at = path_key(path_key(path, "cacheConfig"), "key");
    if (t.type != task_type::simple)
      out.push_back({path_key(path, "cacheConfig"), "nodeflow caches the output of worker "
                                                    "(SIMPLE) tasks only"});
    std::string_view key = t.cache_key;
    for (auto open = key.find("${"); open != std::string_view::npos;
         open = key.find("${", open + 2)) {
      auto close = key.find('}', open);
      auto name = key.substr(open + 2, close == std::string_view::npos ? 0 : close - open - 2);
      if (close == std::string_view::npos || name.empty()
          || name.find_first_of(".[$ ") != std::string_view::npos) {
        out.push_back({at, "expected ${name} of one of the task's inputParameters, got "
                             + quoted(key)});
        break;
      }
    }
  }
}

} // namespace nf::flow
