#include "store/definitions.hpp"

#include <initializer_list>
#include <utility>

#include <boost/json.hpp>

#include "flow/json_read.hpp"
#include "flow/parse.hpp"
#include "flow/serialise.hpp"
#include "flow/validate.hpp"
#include "store/input_errors.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

namespace {

// Explicit columns, every one of them (seed 000: the upsert names its columns).
constexpr statement upsert_task_def{"task_defs.upsert", R"(
INSERT INTO "TaskDefinitions" AS d
  ("namespaceId", "name", "description", "retryCount", "retryLogic", "retryDelaySeconds",
   "maxRetryDelaySeconds", "backoffScaleFactor", "backoffJitterMs", "timeoutSeconds",
   "timeoutPolicy", "responseTimeoutSeconds", "pollTimeoutSeconds", "totalTimeoutSeconds",
   "rateLimitPerFrequency", "rateLimitFrequencyInSeconds", "concurrentExecLimit",
   "cacheTtlSeconds", "cacheKey", "inputKeys", "outputKeys", "inputTemplate", "ownerEmail",
   "secretOutputFields", "queueName", "metadata")
VALUES ($1, $2, $3, $4, $5::task_definition_retry_logic, $6, $7, $8, $9, $10,
        $11::task_definition_timeout_policy, $12, $13, $14, $15, $16, $17, $18, $19,
        $20::text[], $21::text[], $22::jsonb, $23, $24::text[], $25, $26::jsonb)
ON CONFLICT ("namespaceId", "name") DO UPDATE SET
  "revision" = d."revision" + 1,
  "description" = EXCLUDED."description",
  "retryCount" = EXCLUDED."retryCount",
  "retryLogic" = EXCLUDED."retryLogic",
  "retryDelaySeconds" = EXCLUDED."retryDelaySeconds",
  "maxRetryDelaySeconds" = EXCLUDED."maxRetryDelaySeconds",
  "backoffScaleFactor" = EXCLUDED."backoffScaleFactor",
  "backoffJitterMs" = EXCLUDED."backoffJitterMs",
  "timeoutSeconds" = EXCLUDED."timeoutSeconds",
  "timeoutPolicy" = EXCLUDED."timeoutPolicy",
  "responseTimeoutSeconds" = EXCLUDED."responseTimeoutSeconds",
  "pollTimeoutSeconds" = EXCLUDED."pollTimeoutSeconds",
  "totalTimeoutSeconds" = EXCLUDED."totalTimeoutSeconds",
  "rateLimitPerFrequency" = EXCLUDED."rateLimitPerFrequency",
  "rateLimitFrequencyInSeconds" = EXCLUDED."rateLimitFrequencyInSeconds",
  "concurrentExecLimit" = EXCLUDED."concurrentExecLimit",
  "cacheTtlSeconds" = EXCLUDED."cacheTtlSeconds",
  "cacheKey" = EXCLUDED."cacheKey",
  "inputKeys" = EXCLUDED."inputKeys",
  "outputKeys" = EXCLUDED."outputKeys",
  "inputTemplate" = EXCLUDED."inputTemplate",
  "ownerEmail" = EXCLUDED."ownerEmail",
  "secretOutputFields" = EXCLUDED."secretOutputFields",
  "queueName" = EXCLUDED."queueName",
  "metadata" = EXCLUDED."metadata",
  "updatedAt" = now()
RETURNING "revision")"};

constexpr statement select_task_defs{"task_defs.by_namespace", R"(
SELECT "name", "description", "retryCount", "retryLogic", "retryDelaySeconds",
       "maxRetryDelaySeconds", "backoffScaleFactor", "backoffJitterMs", "timeoutSeconds",
       "timeoutPolicy", "responseTimeoutSeconds", "pollTimeoutSeconds", "totalTimeoutSeconds",
       "rateLimitPerFrequency", "rateLimitFrequencyInSeconds", "concurrentExecLimit",
       "cacheTtlSeconds", "cacheKey", array_to_json("inputKeys") AS "inputKeys",
       array_to_json("outputKeys") AS "outputKeys", "inputTemplate", "ownerEmail",
       array_to_json("secretOutputFields") AS "secretOutputFields", "queueName", "metadata"
  FROM "TaskDefinitions" WHERE "namespaceId" = $1)"};

constexpr statement upsert_workflow_def{"workflow_defs.upsert", R"(
INSERT INTO "WorkflowDefinitions" AS d
  ("namespaceId", "name", "version", "description", "tasks", "inputParameters",
   "outputParameters", "variables", "timeoutSeconds", "timeoutPolicy", "failureWorkflow",
   "restartable", "ownerEmail", "inputTemplate", "workflowStatusListenerEnabled", "metadata")
VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8::jsonb, $9,
        $10::workflow_definition_timeout_policy, $11, $12, $13, $14::jsonb, $15, $16::jsonb)
ON CONFLICT ("namespaceId", "name", "version") DO UPDATE SET
  "description" = EXCLUDED."description",
  "tasks" = EXCLUDED."tasks",
  "inputParameters" = EXCLUDED."inputParameters",
  "outputParameters" = EXCLUDED."outputParameters",
  "variables" = EXCLUDED."variables",
  "timeoutSeconds" = EXCLUDED."timeoutSeconds",
  "timeoutPolicy" = EXCLUDED."timeoutPolicy",
  "failureWorkflow" = EXCLUDED."failureWorkflow",
  "restartable" = EXCLUDED."restartable",
  "ownerEmail" = EXCLUDED."ownerEmail",
  "inputTemplate" = EXCLUDED."inputTemplate",
  "workflowStatusListenerEnabled" = EXCLUDED."workflowStatusListenerEnabled",
  "metadata" = EXCLUDED."metadata",
  "updatedAt" = now())"};

// Latest version: the PK read backwards (docs/schema.md).
constexpr statement select_workflow_def{"workflow_defs.get", R"(
SELECT "name", "version", "description", "tasks", "inputParameters", "outputParameters",
       "variables", "timeoutSeconds", "timeoutPolicy", "failureWorkflow", "restartable",
       "ownerEmail", "inputTemplate", "workflowStatusListenerEnabled", "metadata"
  FROM "WorkflowDefinitions"
 WHERE "namespaceId" = $1 AND "name" = $2 AND ($3::integer IS NULL OR "version" = $3)
 ORDER BY "version" DESC LIMIT 1)"};

// Every version of every workflow definition, for listing: the PK order.
constexpr statement select_all_workflow_defs{"workflow_defs.all", R"(
SELECT "name", "version", "description", "tasks", "inputParameters", "outputParameters",
       "variables", "timeoutSeconds", "timeoutPolicy", "failureWorkflow", "restartable",
       "ownerEmail", "inputTemplate", "workflowStatusListenerEnabled", "metadata"
  FROM "WorkflowDefinitions"
 WHERE "namespaceId" = $1
 ORDER BY "name", "version")"};

// The workflow definitions whose tasks (at any depth: forks, switch cases, loop bodies)
// name this task definition. Every task of a stored definition has its
// "taskReferenceName", which tells a task apart from a JSON value that only looks like one.
constexpr statement task_def_users{"task_defs.users", R"(
SELECT "name", "version" FROM "WorkflowDefinitions"
 WHERE "namespaceId" = $1
   AND jsonb_path_exists("tasks",
         '$.** ? (@.name == $n && exists(@.taskReferenceName))',
         jsonb_build_object('n', $2::text))
 ORDER BY "name", "version"
 LIMIT 11)"};

constexpr statement delete_task_def_row{"task_defs.delete", R"(
DELETE FROM "TaskDefinitions" WHERE "namespaceId" = $1 AND "name" = $2 RETURNING "name")"};

// Whether executions of this version still run (the active index: sized by in-flight work).
constexpr statement workflow_def_running{"workflow_defs.running", R"(
SELECT count(*) AS running FROM (
  SELECT 1 FROM "WorkflowExecutions"
   WHERE "namespaceId" = $1 AND "workflowName" = $2 AND "workflowVersion" = $3::integer
     AND "status" IN ('RUNNING', 'PAUSED')
   LIMIT 1) AS r)"};

constexpr statement delete_workflow_def_row{"workflow_defs.delete", R"(
DELETE FROM "WorkflowDefinitions"
 WHERE "namespaceId" = $1 AND "name" = $2 AND "version" = $3::integer RETURNING "version")"};

std::optional<std::string> text_or_null(const std::string& s) {
  if (s.empty())
    return std::nullopt;
  return s;
}

/// flow's 0 = "none" for limits whose column is NULL when unset.
std::optional<int64_t> count_or_null(int64_t x) {
  if (x == 0)
    return std::nullopt;
  return x;
}

void check_text(const std::string& value, const std::string& path, flow::problems& out) {
  // libpq sends text as C strings: a NUL would silently cut the value short.
  if (value.find('\0') != std::string::npos)
    out.push_back({path, "must not contain the NUL character (\\u0000)"});
}

/// A definition's name (required) and its other text fields: no NUL anywhere.
void check_texts(const std::string& path, const std::string& name,
                 std::initializer_list<std::pair<const std::string*, const char*>> texts,
                 flow::problems& out) {
  if (name.empty())
    out.push_back({flow::path_key(path, "name"),
                   "missing required field (expected a non-empty string)"});
  check_text(name, flow::path_key(path, "name"), out);
  for (auto [text, field] : texts)
    check_text(*text, flow::path_key(path, field), out);
}

void check_count(int64_t value, const std::string& path, int64_t min, flow::problems& out) {
  if (value < min || value > flow::max_count)
    out.push_back({path, "expected an integer from " + std::to_string(min) + " to "
                           + std::to_string(flow::max_count) + ", got "
                           + std::to_string(value)});
}

params task_def_params(const namespace_id& ns, const flow::task_def& d) {
  return params::of(
    ns, d.name, text_or_null(d.description), d.retry_count, std::string{flow::to_string(d.logic)},
    d.retry_delay_seconds, count_or_null(d.max_retry_delay_seconds), d.backoff_scale_factor,
    d.backoff_jitter_ms, d.timeout_seconds, std::string{flow::to_string(d.policy)},
    d.response_timeout_seconds, count_or_null(d.poll_timeout_seconds),
    count_or_null(d.total_timeout_seconds), d.rate_limit_per_frequency,
    d.rate_limit_frequency_in_seconds, count_or_null(d.concurrent_exec_limit),
    count_or_null(d.cache_ttl_seconds), text_or_null(d.cache_key), text_array(d.input_keys),
    text_array(d.output_keys), json(d.input_template), text_or_null(d.owner_email),
    text_array(d.secret_output_fields), text_or_null(d.queue_name), json(d.metadata));
}

boost::json::value parse_stored(std::string_view text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(boost::json::string_view{text.data(), text.size()}, ec);
  return ec ? boost::json::value{} : v;
}

std::vector<std::string> strings_of(std::string_view text) {
  std::vector<std::string> out;
  auto v = parse_stored(text);
  if (const auto* arr = v.if_array())
    for (const auto& x : *arr)
      if (const auto* s = x.if_string())
        out.emplace_back(*s);
  return out;
}

boost::json::object object_of(std::string_view text) {
  auto v = parse_stored(text);
  if (auto* obj = v.if_object())
    return std::move(*obj);
  return {};
}

/// Where select_task_defs' result holds its columns.
struct task_def_columns {
  explicit task_def_columns(const result& r)
    : name(r.column_named("name")), description(r.column_named("description")),
      owner_email(r.column_named("ownerEmail")), queue_name(r.column_named("queueName")),
      retry_count(r.column_named("retryCount")), retry_logic(r.column_named("retryLogic")),
      retry_delay(r.column_named("retryDelaySeconds")),
      max_retry_delay(r.column_named("maxRetryDelaySeconds")),
      backoff_scale(r.column_named("backoffScaleFactor")),
      backoff_jitter(r.column_named("backoffJitterMs")),
      timeout(r.column_named("timeoutSeconds")), policy(r.column_named("timeoutPolicy")),
      response_timeout(r.column_named("responseTimeoutSeconds")),
      poll_timeout(r.column_named("pollTimeoutSeconds")),
      total_timeout(r.column_named("totalTimeoutSeconds")),
      rate_per_frequency(r.column_named("rateLimitPerFrequency")),
      rate_frequency(r.column_named("rateLimitFrequencyInSeconds")),
      concurrent_limit(r.column_named("concurrentExecLimit")),
      cache_ttl(r.column_named("cacheTtlSeconds")), cache_key(r.column_named("cacheKey")),
      input_keys(r.column_named("inputKeys")), output_keys(r.column_named("outputKeys")),
      secret_output_fields(r.column_named("secretOutputFields")),
      input_template(r.column_named("inputTemplate")), metadata(r.column_named("metadata")) {}
  int name, description, owner_email, queue_name, retry_count, retry_logic, retry_delay,
    max_retry_delay, backoff_scale, backoff_jitter, timeout, policy, response_timeout,
    poll_timeout, total_timeout, rate_per_frequency, rate_frequency, concurrent_limit, cache_ttl,
    cache_key, input_keys, output_keys, secret_output_fields, input_template, metadata;
};

flow::task_def task_def_of(const result& r, const task_def_columns& c, int row) {
  flow::task_def d;
  auto str = [&](int col) { return r.opt_str(row, col).value_or(""); };
  auto num = [&](int col) { return r.opt_i64(row, col).value_or(0); };
  d.name = str(c.name);
  d.description = str(c.description);
  d.owner_email = str(c.owner_email);
  d.queue_name = str(c.queue_name);
  d.retry_count = num(c.retry_count);
  d.logic = flow::parse_retry_logic(str(c.retry_logic)).value_or(flow::retry_logic::fixed);
  d.retry_delay_seconds = num(c.retry_delay);
  d.max_retry_delay_seconds = num(c.max_retry_delay);
  d.backoff_scale_factor = num(c.backoff_scale);
  d.backoff_jitter_ms = num(c.backoff_jitter);
  d.timeout_seconds = num(c.timeout);
  d.policy = flow::parse_timeout_policy(str(c.policy))
               .value_or(flow::timeout_policy::time_out_wf);
  d.response_timeout_seconds = num(c.response_timeout);
  d.poll_timeout_seconds = num(c.poll_timeout);
  d.total_timeout_seconds = num(c.total_timeout);
  d.rate_limit_per_frequency = num(c.rate_per_frequency);
  d.rate_limit_frequency_in_seconds = num(c.rate_frequency);
  d.concurrent_exec_limit = num(c.concurrent_limit);
  d.cache_ttl_seconds = num(c.cache_ttl);
  d.cache_key = str(c.cache_key);
  d.input_keys = strings_of(str(c.input_keys));
  d.output_keys = strings_of(str(c.output_keys));
  d.secret_output_fields = strings_of(str(c.secret_output_fields));
  d.input_template = object_of(str(c.input_template));
  d.metadata = object_of(str(c.metadata));
  return d;
}

caf::expected<flow::workflow_def> workflow_def_of(const result& r, int row = 0) {
  flow::workflow_def d;
  auto str = [&](const char* c) { return r.opt_str(row, r.column_named(c)).value_or(""); };
  d.name = str("name");
  d.version = r.i64(row, r.column_named("version"));
  d.description = str("description");
  flow::problems errs;
  auto tasks = parse_stored(str("tasks"));
  if (const auto* arr = tasks.if_array())
    for (size_t i = 0; i < arr->size(); ++i)
      d.tasks.push_back(flow::read_workflow_task((*arr)[i], flow::path_index("tasks", i), errs));
  d.input_parameters = strings_of(str("inputParameters"));
  d.output_parameters = object_of(str("outputParameters"));
  d.variables = object_of(str("variables"));
  d.timeout_seconds = r.i64(row, r.column_named("timeoutSeconds"));
  d.policy = flow::parse_timeout_policy(str("timeoutPolicy"))
               .value_or(flow::timeout_policy::alert_only);
  d.failure_workflow = str("failureWorkflow");
  d.restartable = r.boolean(row, r.column_named("restartable"));
  d.owner_email = str("ownerEmail");
  d.input_template = object_of(str("inputTemplate"));
  d.status_listener_enabled = r.boolean(row, r.column_named("workflowStatusListenerEnabled"));
  d.metadata = object_of(str("metadata"));
  if (!errs.empty())
    return make_error(errc::internal, "stored workflow definition \"" + d.name + "\" version "
                                        + std::to_string(d.version)
                                        + " no longer reads: " + flow::to_string(errs.front()));
  return d;
}

boost::json::array to_json_array(const std::vector<std::string>& xs) {
  boost::json::array out;
  for (const auto& x : xs)
    out.emplace_back(x);
  return out;
}

} // namespace

flow::problems check_task_def(const flow::task_def& d, const std::string& path) {
  auto out = flow::validate(d, path);
  auto field = [&](std::string_view f) { return flow::path_key(path, f); };
  check_texts(path, d.name,
              {{&d.description, "description"}, {&d.owner_email, "ownerEmail"},
               {&d.queue_name, "queueName"}, {&d.cache_key, "cacheKey"}},
              out);
  for (auto [list, name] : {std::pair{&d.input_keys, "inputKeys"},
                            std::pair{&d.output_keys, "outputKeys"},
                            std::pair{&d.secret_output_fields, "secretOutputFields"}})
    for (size_t i = 0; i < list->size(); ++i)
      check_text((*list)[i], flow::path_index(field(name), i), out);
  // flow::validate reports a zero backoffScaleFactor, and a zero frequency
  // when a rate limit is set; the column CHECKs (> 0) forbid zero always.
  check_count(d.backoff_scale_factor, field("backoffScaleFactor"),
              d.backoff_scale_factor == 0 ? 0 : 1, out);
  check_count(d.rate_limit_frequency_in_seconds, field("rateLimitFrequencyInSeconds"),
              d.rate_limit_frequency_in_seconds == 0 && d.rate_limit_per_frequency > 0 ? 0 : 1,
              out);
  for (auto [value, name] : {std::pair{d.retry_count, "retryCount"},
                             std::pair{d.retry_delay_seconds, "retryDelaySeconds"},
                             std::pair{d.max_retry_delay_seconds, "maxRetryDelaySeconds"},
                             std::pair{d.backoff_jitter_ms, "backoffJitterMs"},
                             std::pair{d.timeout_seconds, "timeoutSeconds"},
                             std::pair{d.response_timeout_seconds, "responseTimeoutSeconds"},
                             std::pair{d.poll_timeout_seconds, "pollTimeoutSeconds"},
                             std::pair{d.total_timeout_seconds, "totalTimeoutSeconds"},
                             std::pair{d.rate_limit_per_frequency, "rateLimitPerFrequency"},
                             std::pair{d.concurrent_exec_limit, "concurrentExecLimit"},
                             std::pair{d.cache_ttl_seconds, "cacheTtlSeconds"}})
    check_count(value, field(name), 0, out);
  return out;
}

flow::problems check_workflow_def(const flow::workflow_def& d, const std::string& path) {
  auto out = flow::validate(d, path);
  auto field = [&](std::string_view f) { return flow::path_key(path, f); };
  check_texts(path, d.name,
              {{&d.description, "description"}, {&d.failure_workflow, "failureWorkflow"},
               {&d.owner_email, "ownerEmail"}},
              out);
  check_count(d.version, field("version"), 1, out);
  check_count(d.timeout_seconds, field("timeoutSeconds"), 0, out);
  if (d.policy == flow::timeout_policy::retry)
    out.push_back({field("timeoutPolicy"), "expected one of TIME_OUT_WF, ALERT_ONLY, got RETRY"});
  if (d.schema_version != 2)
    out.push_back({field("schemaVersion"), "expected 2 (the only schema version supported), got "
                                             + std::to_string(d.schema_version)});
  return out;
}

namespace {

params workflow_def_params(const namespace_id& ns, const flow::workflow_def& d) {
  boost::json::array tasks;
  for (const auto& t : d.tasks)
    tasks.push_back(flow::to_json(t));
  return params::of(ns, d.name, static_cast<int64_t>(d.version), text_or_null(d.description),
                    json(tasks), json(to_json_array(d.input_parameters)),
                    json(d.output_parameters), json(d.variables), d.timeout_seconds,
                    std::string{flow::to_string(d.policy)}, text_or_null(d.failure_workflow),
                    d.restartable, text_or_null(d.owner_email), json(d.input_template),
                    d.status_listener_enabled, json(d.metadata));
}

/// Every problem of `defs`, each path under `at(i)`.
template <class Def, class Check, class At>
void check_all(const std::vector<Def>& defs, Check check, At at, flow::problems& out) {
  for (size_t i = 0; i < defs.size(); ++i) {
    auto more = check(defs[i], at(i));
    out.insert(out.end(), more.begin(), more.end());
  }
}

/// Upserts checked definitions, task definitions first, in one transaction: all or none
/// (I11). Cold tables, a handful of rows: one pipelined round trip (TEXT[] columns do not
/// go through unnest). Returns the task definitions' revisions, in order.
caf::expected<std::vector<int64_t>> write_all(connection& conn, const namespace_id& ns,
                                              const std::vector<flow::task_def>& tasks,
                                              const std::vector<flow::workflow_def>& workflows,
                                              const audit_event* audit = nullptr) {
  if (tasks.empty() && workflows.empty())
    return std::vector<int64_t>{};
  return perform(conn, [&](transaction& tx) -> caf::expected<std::vector<int64_t>> {
    pipeline p{tx.conn()};
    for (const auto& d : tasks)
      p.add(upsert_task_def, task_def_params(ns, d));
    for (const auto& d : workflows)
      p.add(upsert_workflow_def, workflow_def_params(ns, d));
    // After the definitions, in the same round trip (store/audit.hpp).
    if (audit != nullptr)
      if (auto a = add_audits(p, {*audit}); !a)
        return std::move(a.error());
    auto rs = p.run();
    if (!rs)
      return std::move(rs.error());
    std::vector<int64_t> revisions;
    for (size_t i = 0; i < tasks.size(); ++i)
      revisions.push_back((*rs)[i].i64(0, (*rs)[i].column_named("revision")));
    return revisions;
  });
}

/// `indexed`: problem paths start with "[i]" (the input was an array).
caf::expected<std::vector<int64_t>> write_task_defs(connection& conn, const namespace_id& ns,
                                                    const std::vector<flow::task_def>& defs,
                                                    bool indexed) {
  flow::problems errs;
  check_all(defs, check_task_def,
            [&](size_t i) { return indexed ? flow::path_index("", i) : std::string{}; }, errs);
  if (!errs.empty())
    return invalid_input(errs);
  return write_all(conn, ns, defs, {});
}

} // namespace

caf::expected<std::vector<int64_t>> put_task_defs(connection& conn, const namespace_id& ns,
                                                  const std::vector<flow::task_def>& defs) {
  return write_task_defs(conn, ns, defs, defs.size() > 1);
}

caf::expected<std::vector<int64_t>> put_task_defs_json(connection& conn, const namespace_id& ns,
                                                       std::string_view json_text) {
  flow::problems errs;
  boost::json::value v;
  if (!flow::parse_json(json_text, v, errs))
    return invalid_input(errs);
  std::vector<flow::task_def> defs;
  if (const auto* arr = v.if_array()) {
    for (size_t i = 0; i < arr->size(); ++i)
      defs.push_back(flow::read_task_def((*arr)[i], flow::path_index("", i), errs));
  } else {
    defs.push_back(flow::read_task_def(v, "", errs));
  }
  if (!errs.empty())
    return invalid_input(errs);
  return write_task_defs(conn, ns, defs, v.is_array());
}

caf::expected<void> put_workflow_def(connection& conn, const namespace_id& ns,
                                     const flow::workflow_def& d) {
  if (auto errs = check_workflow_def(d); !errs.empty())
    return invalid_input(errs);
  if (auto r = write_all(conn, ns, {}, {d}); !r)
    return std::move(r.error());
  return {};
}

caf::expected<std::vector<int64_t>>
put_definitions(connection& conn, const namespace_id& ns, const std::vector<flow::task_def>& tasks,
                const std::vector<flow::workflow_def>& workflows, const audit_event* audit) {
  flow::problems errs;
  check_all(tasks, check_task_def, [](size_t i) { return flow::path_index("taskDefs", i); },
            errs);
  check_all(workflows, check_workflow_def,
            [](size_t i) { return flow::path_index("workflowDefs", i); }, errs);
  if (!errs.empty())
    return invalid_input(errs);
  return write_all(conn, ns, tasks, workflows, audit);
}

caf::expected<flow::workflow_def> put_workflow_def_json(connection& conn, const namespace_id& ns,
                                                        std::string_view json_text) {
  auto loaded = flow::load_workflow_def(json_text);
  if (!loaded.ok())
    return invalid_input(loaded.errors);
  if (auto r = put_workflow_def(conn, ns, loaded.def); !r)
    return std::move(r.error());
  return std::move(loaded.def);
}

caf::expected<flow::task_def_map> load_task_defs(connection& conn, const namespace_id& ns) {
  auto r = conn.run(select_task_defs, params::of(ns));
  if (!r)
    return std::move(r.error());
  flow::task_def_map out;
  const task_def_columns columns{*r};
  for (int i = 0; i < r->rows(); ++i) {
    auto d = task_def_of(*r, columns, i);
    auto name = d.name;
    out.emplace(std::move(name), std::move(d));
  }
  return out;
}

caf::expected<flow::workflow_def> load_workflow_def(connection& conn, const namespace_id& ns,
                                                    std::string_view name,
                                                    std::optional<int64_t> version) {
  auto r = conn.run01(select_workflow_def, params::of(ns, name, version));
  if (!r)
    return std::move(r.error());
  if (!*r) {
    std::string what = "workflow definition " + flow::quoted(name);
    if (version)
      what += " version " + std::to_string(*version);
    return make_error(errc::not_found, what + " not found");
  }
  return workflow_def_of(**r);
}

} // namespace nf::store

namespace nf::store {

caf::expected<std::vector<flow::workflow_def>> load_all_workflow_defs(connection& conn,
                                                                      const namespace_id& ns) {
  auto r = conn.run(select_all_workflow_defs, params::of(ns));
  if (!r)
    return std::move(r.error());
  std::vector<flow::workflow_def> out;
  for (int i = 0; i < r->rows(); ++i) {
    auto d = workflow_def_of(*r, i);
    if (!d)
      return std::move(d.error());
    out.push_back(std::move(*d));
  }
  return out;
}

caf::expected<void> delete_task_def(connection& conn, const namespace_id& ns,
                                    std::string_view name, const audit_event* audit) {
  return perform(conn, [&](transaction& tx) -> caf::expected<void> {
    auto users = tx.conn().run(task_def_users, params::of(ns, name));
    if (!users)
      return std::move(users.error());
    if (users->rows() > 0) {
      std::string list;
      const int n = users->column_named("name"), v = users->column_named("version");
      for (int i = 0; i < users->rows() && i < 10; ++i)
        list += (list.empty() ? "" : ", ") + flow::quoted(users->str(i, n)) + " version "
                + std::to_string(users->i64(i, v));
      if (users->rows() > 10)
        list += ", …";
      return make_error(errc::conflict, "task definition " + flow::quoted(name)
                                          + " is used by workflow definitions " + list
                                          + ": change or delete those first");
    }
    auto r = tx.conn().run01(delete_task_def_row, params::of(ns, name));
    if (!r)
      return std::move(r.error());
    if (!*r)
      return make_error(errc::not_found,
                        "task definition " + flow::quoted(name) + " not found");
    return audit != nullptr ? append_audit(tx.conn(), *audit) : caf::expected<void>{};
  });
}

caf::expected<void> delete_workflow_def(connection& conn, const namespace_id& ns,
                                        std::string_view name, int64_t version,
                                        const audit_event* audit) {
  return perform(conn, [&](transaction& tx) -> caf::expected<void> {
    auto running = tx.conn().run01(workflow_def_running, params::of(ns, name, version));
    if (!running)
      return std::move(running.error());
    if (*running && (*running)->i64(0, (*running)->column_named("running")) > 0)
      return make_error(errc::conflict, "workflow definition " + flow::quoted(name) + " version "
                                          + std::to_string(version)
                                          + " has running or paused executions, which read "
                                            "it at every step: end them first");
    auto r = tx.conn().run01(delete_workflow_def_row, params::of(ns, name, version));
    if (!r)
      return std::move(r.error());
    if (!*r)
      return make_error(errc::not_found, "workflow definition " + flow::quoted(name)
                                           + " version " + std::to_string(version)
                                           + " not found");
    return audit != nullptr ? append_audit(tx.conn(), *audit) : caf::expected<void>{};
  });
}

} // namespace nf::store
