#include "store/task_progress.hpp"

#include <boost/json/parse.hpp>

#include "flow/redaction.hpp"
#include "store/api_reads.hpp"
#include "store/json.hpp"
#include "store/payloads.hpp"
#include "store/pg/pipeline.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// The task's definition's secret fields, so the progress event's "outputData" is redacted as
// the completion's output is (store/task_transitions.cpp, task.finish).
constexpr statement secret_fields{"task.secret_output_fields", R"(
SELECT array_to_json(d."secretOutputFields")::text AS fields
  FROM "TaskExecutions" t
  JOIN "TaskDefinitions" d ON d."namespaceId" = t."namespaceId" AND d."name" = t."taskDefName"
 WHERE t."workflowId" = $1::uuid AND t."id" = $2::uuid)"};

caf::expected<std::vector<std::string>> secret_fields_of(connection& conn, const workflow_id& wf,
                                                         const task_id& task) {
  auto r = conn.run(secret_fields, params::of(wf, task));
  if (!r)
    return std::move(r.error());
  std::vector<std::string> out;
  if (r->rows() == 0 || r->is_null(0, r->column_named("fields")))
    return out;
  boost::json::error_code ec;
  auto v = boost::json::parse(r->text(0, r->column_named("fields")), ec);
  if (!ec && v.is_array())
    for (const auto& f : v.as_array())
      if (f.is_string())
        out.emplace_back(f.as_string().data(), f.as_string().size());
  return out;
}

// The output so far replaces the running task's "output", as a Conductor update's does: the
// workflow shows it, and the worker that takes the task again after a callback reads it in
// its poll answer. A task no longer IN_PROGRESS keeps what its end wrote.
constexpr statement progress_output{"task.progress_output", R"(
UPDATE "TaskExecutions" t
   SET "output" = $3::jsonb, "outputPayloadId" = $4::uuid, "updatedAt" = now()
 WHERE t."workflowId" = $1::uuid AND t."id" = $2::uuid AND t."status" = 'IN_PROGRESS')"};

caf::expected<void> write_progress_output(connection& conn, const workflow_id& wf,
                                          const task_id& task, const boost::json::value& output) {
  payload_writes payloads;
  auto placed = payloads.place(wf, json(output));
  pipeline p{conn};
  payloads.add_to(p);
  p.add(progress_output, params::of(wf, task, placed.inline_json, placed.payload_id));
  if (auto r = p.run(); !r)
    return std::move(r.error());
  return {};
}

} // namespace

caf::expected<void> record_task_progress(connection& conn, const workflow_id& wf,
                                            const task_id& task,
                                            const boost::json::value& payload) {
  boost::json::value redacted = payload;
  if (auto* o = redacted.if_object())
    if (auto it = o->find("outputData"); it != o->end() && it->value().is_object()) {
      auto fields = secret_fields_of(conn, wf, task);
      if (!fields)
        return std::move(fields.error());
      flow::redact_fields(it->value().as_object(), *fields);
    }
  auto text = json(redacted);
  return perform_replanning(conn, [&](transaction&) -> caf::expected<void> {
    auto h = read_execution_header(conn, wf);
    if (!h)
      return std::move(h.error());
    // The task must be the workflow's: task_response_timeout is `not_found` otherwise.
    if (auto t = task_response_timeout(conn, wf, task, h->ns); !t)
      return std::move(t.error());
    transition_plan plan;
    plan.events.push_back({wf, h->ns, h->shard, "TASK_IN_PROGRESS", task, std::nullopt, text});
    if (auto a = apply_transition(conn, plan); !a)
      return a;
    if (const auto* o = redacted.if_object())
      if (const auto* out = o->if_contains("outputData"); out != nullptr && out->is_object())
        return write_progress_output(conn, wf, task, *out);
    return {};
  });
}

} // namespace nf::store
