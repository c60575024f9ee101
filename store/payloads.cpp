#include "store/payloads.hpp"

#include <algorithm>
#include <atomic>

#include "proto/errors.hpp"
#include "store/decisions.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/pipeline.hpp"

namespace nf::store {

namespace {

std::atomic<int64_t> threshold{default_inline_max_bytes};

// A reported output ($4 names its task) is redacted as `task.finish` (store/task_transitions.cpp)
// redacts one kept inline: its definition's "secretOutputFields", top-level keys, become
// "***". One probe of the task row and of its definition per such payload, only for an
// object.
constexpr statement insert_payloads{"payloads.insert", R"(
INSERT INTO "Payloads" ("workflowId", "id", "body")
SELECT u.wf, u.id,
       CASE WHEN u.task IS NULL OR jsonb_typeof(u.body) <> 'object' THEN u.body
            ELSE COALESCE((SELECT u.body || jsonb_object_agg(f, to_jsonb('***'::text))
                             FROM "TaskExecutions" t
                             JOIN "TaskDefinitions" d ON d."namespaceId" = t."namespaceId"
                                                     AND d."name" = t."taskDefName"
                            CROSS JOIN unnest(d."secretOutputFields") AS f
                            WHERE t."workflowId" = u.wf AND t."id" = u.task AND u.body ? f),
                          u.body) END
  FROM unnest($1::uuid[], $2::uuid[], $3::jsonb[], $4::uuid[]) AS u(wf, id, body, task))"};

// A probe per reference by the primary key, each pruned to its own partition at run time
// (docs/schema.md §4.3, the lateral form). Runs only when a row read has a reference.
constexpr statement select_payloads{"payloads.read", R"(
SELECT p."id", p."body"::text AS body
  FROM unnest($1::uuid[], $2::uuid[]) AS u(wf, id)
 CROSS JOIN LATERAL (
   SELECT "id", "body" FROM "Payloads" WHERE "workflowId" = u.wf AND "id" = u.id OFFSET 0) p)"};

} // namespace

void set_inline_max_bytes(int64_t n) {
  threshold.store(std::clamp(n, min_inline_max_bytes, max_inline_max_bytes),
                  std::memory_order_relaxed);
}

int64_t inline_max_bytes() {
  return threshold.load(std::memory_order_relaxed);
}

bool stored_out_of_line(std::string_view json_text) {
  return static_cast<int64_t>(json_text.size()) > inline_max_bytes();
}

placed_value payload_writes::place(const workflow_id& wf, const std::optional<json_text>& value) {
  placed_value out;
  if (!value)
    return out;
  if (!stored_out_of_line(value->str())) {
    out.inline_json = *value;
    return out;
  }
  out.payload_id = new_uuidv7();
  workflows_.push_back(wf.str());
  ids_.push_back(*out.payload_id);
  bodies_.push_back(*value);
  reported_by_.emplace_back(std::nullopt);
  return out;
}

placed_value payload_writes::place_reported(const workflow_id& wf, const task_id& task,
                                            const std::optional<json_text>& value) {
  auto out = place(wf, value);
  if (out.offloaded())
    reported_by_.back() = task.str();
  return out;
}

void payload_writes::add_to(pipeline& p) const {
  if (ids_.empty())
    return;
  p.add(insert_payloads, params::of(text_array(workflows_), text_array(ids_), json_array(bodies_),
                                    text_array(reported_by_)));
}

caf::expected<std::map<std::string, std::string>>
read_payloads(connection& conn, const std::vector<std::pair<std::string, std::string>>& refs) {
  std::map<std::string, std::string> out;
  if (refs.empty())
    return out;
  std::vector<std::string> wfs, ids;
  for (const auto& [wf, id] : refs) {
    wfs.push_back(wf);
    ids.push_back(id);
  }
  auto r = conn.run(select_payloads, params::of(text_array(wfs), text_array(ids)));
  if (!r)
    return std::move(r.error());
  const int id = r->column_named("id"), body = r->column_named("body");
  for (int row = 0; row < r->rows(); ++row)
    out.emplace(r->str(row, id), r->str(row, body));
  for (const auto& [wf, pid] : refs)
    if (out.count(pid) == 0)
      return make_error(errc::internal, "payload " + pid + " of workflow " + wf
                                          + " is referenced but not stored");
  return out;
}

namespace {

void note(std::vector<std::pair<std::string, std::string>>& refs, const workflow_id& wf,
          const std::optional<std::string>& id) {
  if (id)
    refs.emplace_back(wf.str(), *id);
}

void note(std::vector<std::pair<std::string, std::string>>& refs, const workflow_id& wf,
          const task_row& t) {
  note(refs, wf, t.input_payload_id);
  note(refs, wf, t.output_payload_id);
}

void fill(const std::map<std::string, std::string>& bodies, task_row& t) {
  if (t.input_payload_id)
    t.input = bodies.at(*t.input_payload_id);
  if (t.output_payload_id)
    t.output = bodies.at(*t.output_payload_id);
}

} // namespace

caf::expected<void> resolve_payloads(connection& conn, std::vector<workflow_snapshot>& snaps) {
  std::vector<std::pair<std::string, std::string>> refs;
  for (const auto& s : snaps) {
    note(refs, s.id, s.output_payload_id);
    for (const auto& t : s.tasks)
      note(refs, s.id, t);
  }
  if (refs.empty())
    return {};
  auto bodies = read_payloads(conn, refs);
  if (!bodies)
    return std::move(bodies.error());
  for (auto& s : snaps) {
    if (s.output_payload_id)
      s.output = bodies->at(*s.output_payload_id);
    for (auto& t : s.tasks)
      fill(*bodies, t);
  }
  return {};
}

caf::expected<void> resolve_payloads(connection& conn,
                                     std::vector<std::pair<workflow_id, task_row>>& rows) {
  std::vector<std::pair<std::string, std::string>> refs;
  for (const auto& [wf, t] : rows)
    note(refs, wf, t);
  if (refs.empty())
    return {};
  auto bodies = read_payloads(conn, refs);
  if (!bodies)
    return std::move(bodies.error());
  for (auto& [wf, t] : rows)
    fill(*bodies, t);
  return {};
}

} // namespace nf::store
