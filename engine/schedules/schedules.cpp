#include "engine/schedules/schedules.hpp"

#include <regex>

#include <boost/json.hpp>

#include "engine/audit_trail.hpp"
#include "engine/schedules/ticks.hpp"
#include "proto/errors.hpp"
#include "store/audit.hpp"
#include "store/decide_support.hpp"
#include "store/definitions.hpp"
#include "store/schedules.hpp"
#include "store/workflows.hpp"

namespace nf::engine::schedules {

namespace json = boost::json;

namespace {

nf::namespace_id namespace_of(const std::string& ns) {
  return ns.empty() ? nf::default_namespace : nf::namespace_id{ns};
}

caf::error invalid(const std::string& field, const std::string& why) {
  return nf::make_error(nf::errc::invalid, field + ": " + why);
}

caf::error not_found(const std::string& name) {
  return nf::make_error(nf::errc::not_found, "schedule \"" + name + "\" not found");
}

bool valid_name(const std::string& name) {
  static const std::regex re{"^[A-Za-z0-9_.-]{1,128}$"};
  return std::regex_match(name, re);
}

json::value opt_ms(const std::optional<int64_t>& ms) {
  return ms ? json::value(*ms) : json::value(nullptr);
}

json::object to_json(const store::schedule_row& s) {
  json::object o;
  o["name"] = s.name;
  o["cronExpression"] = s.cron_expression;
  o["zoneId"] = s.zone_id;
  boost::system::error_code ec;
  auto req = json::parse(s.start_request_json, ec);
  o["startWorkflowRequest"] = ec ? json::value(nullptr) : req;
  o["paused"] = s.paused;
  if (s.paused_reason)
    o["pausedReason"] = *s.paused_reason;
  o["runCatchupScheduleInstances"] = s.run_catchup;
  o["scheduleStartTime"] = opt_ms(s.start_ms);
  o["scheduleEndTime"] = opt_ms(s.end_ms);
  if (s.description)
    o["description"] = *s.description;
  o["createdBy"] = s.created_by;
  o["updatedBy"] = s.updated_by;
  o["createTime"] = s.created_ms;
  o["updatedTime"] = s.updated_ms;
  o["nextRunTime"] = opt_ms(s.next_run_ms);
  o["lastRunTime"] = opt_ms(s.last_run_ms);
  o["lastWorkflowId"] = s.last_workflow_id ? json::value(*s.last_workflow_id) : nullptr;
  return o;
}

// The schedule `name` as the API answers it, or not found.
caf::expected<std::string> read_one(store::connection& conn, const nf::namespace_id& ns,
                                    const std::string& name) {
  auto row = store::get_schedule(conn, ns, name);
  if (!row)
    return std::move(row.error());
  if (!*row)
    return not_found(name);
  return json::serialize(to_json(**row));
}

// SaveScheduleRequest into a row (its next tick not yet set), or `invalid` naming the field.
caf::expected<store::schedule_row> read_save_request(store::connection& conn,
                                                     const msg::schedule_request& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object())
    return invalid("$", "expected a SaveScheduleRequest (a JSON object)");
  const auto& o = v.get_object();
  store::schedule_row s;
  s.ns = namespace_of(r.namespace_id);
  auto text = [&](const char* field, bool required) -> caf::expected<std::optional<std::string>> {
    auto* f = o.if_contains(field);
    if (f == nullptr || f->is_null()) {
      if (required)
        return invalid(field, "missing required field (expected a non-empty string)");
      return std::optional<std::string>{};
    }
    if (!f->is_string() || (required && f->get_string().empty()))
      return invalid(field, "expected a non-empty string");
    return std::optional<std::string>{std::string{f->get_string()}};
  };
  auto flag = [&](const char* field, bool& out) -> caf::error {
    auto* f = o.if_contains(field);
    if (f == nullptr || f->is_null())
      return {};
    if (!f->is_bool())
      return invalid(field, "expected true or false");
    out = f->get_bool();
    return {};
  };
  auto millis = [&](const char* field, std::optional<int64_t>& out) -> caf::error {
    auto* f = o.if_contains(field);
    if (f == nullptr || f->is_null())
      return {};
    if (!f->is_int64() && !f->is_uint64())
      return invalid(field, "expected epoch milliseconds (an integer)");
    auto ms = f->is_int64() ? f->get_int64() : static_cast<int64_t>(f->get_uint64());
    if (ms < 0)
      return invalid(field, "expected epoch milliseconds (an integer from 0)");
    if (ms > 0) // Conductor's clients send 0 for "none"
      out = ms;
    return {};
  };
  static const char* known[] = {"name", "cronExpression", "zoneId", "startWorkflowRequest",
                                "paused", "runCatchupScheduleInstances", "scheduleStartTime",
                                "scheduleEndTime", "description", "createdBy", "updatedBy"};
  for (const auto& kv : o) {
    bool ok = false;
    for (auto* k : known)
      ok = ok || kv.key() == k;
    if (!ok)
      return invalid(std::string{kv.key()},
                     "not a field of a SaveScheduleRequest (name, cronExpression, zoneId, "
                     "startWorkflowRequest, paused, runCatchupScheduleInstances, "
                     "scheduleStartTime, scheduleEndTime, description, createdBy, updatedBy)");
  }
  auto name = text("name", true);
  if (!name)
    return std::move(name.error());
  s.name = **name;
  if (!valid_name(s.name))
    return invalid("name", "expected 1-128 letters, digits, '_', '.' or '-'");
  auto cron = text("cronExpression", true);
  if (!cron)
    return std::move(cron.error());
  s.cron_expression = **cron;
  auto zone = text("zoneId", false);
  if (!zone)
    return std::move(zone.error());
  s.zone_id = zone->value_or("UTC");
  if (s.zone_id.empty())
    s.zone_id = "UTC";
  auto desc = text("description", false);
  if (!desc)
    return std::move(desc.error());
  s.description = *desc;
  for (auto* who : {"createdBy", "updatedBy"}) {
    auto w = text(who, false);
    if (!w)
      return std::move(w.error());
  }
  s.created_by = s.updated_by = r.actor.empty() ? "anonymous" : r.actor;
  if (auto* c = o.if_contains("createdBy"); c && c->is_string() && !c->get_string().empty())
    s.created_by = std::string{c->get_string()};
  if (auto* u = o.if_contains("updatedBy"); u && u->is_string() && !u->get_string().empty())
    s.updated_by = std::string{u->get_string()};
  for (auto err : {flag("paused", s.paused), flag("runCatchupScheduleInstances", s.run_catchup),
                   millis("scheduleStartTime", s.start_ms), millis("scheduleEndTime", s.end_ms)})
    if (err)
      return err;
  if (s.start_ms && s.end_ms && *s.end_ms <= *s.start_ms)
    return invalid("scheduleEndTime", "must be after scheduleStartTime");
  auto* req = o.if_contains("startWorkflowRequest");
  if (req == nullptr || !req->is_object())
    return invalid("startWorkflowRequest", "missing required field (expected an object with "
                                           "the workflow's name)");
  auto start = store::read_start_request(json::serialize(*req), s.ns);
  if (!start)
    return nf::make_error(nf::errc::invalid,
                          "startWorkflowRequest." + nf::message_of(start.error()));
  if (start->idempotency_key)
    return invalid("startWorkflowRequest.idempotencyKey",
                   "not allowed: each tick's start is keyed by the schedule and the tick");
  if (auto def = store::load_workflow_def(conn, s.ns, start->name, start->version); !def)
    return nf::make_error(nf::code_of(def.error()),
                          "startWorkflowRequest.name: " + nf::message_of(def.error()));
  s.workflow_name = start->name;
  s.start_request_json = json::serialize(*req);
  return s;
}

std::string audit_target(const std::string& name) { return "schedule:" + name; }

caf::expected<std::string> save(store::connection& conn, const msg::schedule_request& r) {
  auto s = read_save_request(conn, r);
  if (!s)
    return std::move(s.error());
  auto t = timing_of(s->cron_expression, s->zone_id);
  if (!t)
    return std::move(t.error());
  auto now = store::server_now_ms(conn);
  if (!now)
    return std::move(now.error());
  s->next_run_ms = first_tick(*t, *now, s->start_ms, s->end_ms);
  auto created = store::audited(
    conn, [&](store::connection& c) { return store::save_schedule(c, *s); },
    [&](bool was_created) {
      auto e = audit_event(r.actor, r.origin, "schedules.save", audit_target(s->name),
                           {{"created", was_created},
                            {"cronExpression", s->cron_expression},
                            {"zoneId", s->zone_id},
                            {"workflowName", s->workflow_name},
                            {"paused", s->paused}});
      e.ns = s->ns;
      return e;
    });
  if (!created)
    return std::move(created.error());
  return read_one(conn, s->ns, s->name);
}

caf::expected<std::string> pause_or_resume(store::connection& conn,
                                           const msg::schedule_request& r, bool pause) {
  auto ns = namespace_of(r.namespace_id);
  auto changed = store::audited(
    conn,
    [&](store::connection& c) -> caf::expected<bool> {
      auto row = store::get_schedule(c, ns, r.name, true);
      if (!row)
        return std::move(row.error());
      if (!*row)
        return not_found(r.name);
      std::optional<int64_t> next;
      if (!pause) {
        // Ticks that fell due while paused are not caught up: it runs from the next one.
        auto t = timing_of((*row)->cron_expression, (*row)->zone_id);
        if (!t)
          return std::move(t.error());
        auto now = store::server_now_ms(c);
        if (!now)
          return std::move(now.error());
        next = first_tick(*t, *now, (*row)->start_ms, (*row)->end_ms);
      }
      std::optional<std::string> reason;
      if (pause && !r.reason.empty())
        reason = r.reason;
      return store::set_schedule_paused(c, ns, r.name, pause, reason, next,
                                        r.actor.empty() ? "anonymous" : r.actor);
    },
    [&](bool) {
      json::object details;
      if (pause && !r.reason.empty())
        details["reason"] = r.reason;
      auto e = audit_event(r.actor, r.origin, pause ? "schedules.pause" : "schedules.resume",
                           audit_target(r.name), std::move(details));
      e.ns = ns;
      return e;
    });
  if (!changed)
    return std::move(changed.error());
  return read_one(conn, ns, r.name);
}

caf::expected<std::string> remove(store::connection& conn, const msg::schedule_request& r) {
  auto ns = namespace_of(r.namespace_id);
  auto gone = store::audited(
    conn,
    [&](store::connection& c) -> caf::expected<bool> {
      auto d = store::delete_schedule(c, ns, r.name);
      if (!d)
        return std::move(d.error());
      if (!*d)
        return not_found(r.name);
      return true;
    },
    [&](bool) {
      auto e = audit_event(r.actor, r.origin, "schedules.delete", audit_target(r.name));
      e.ns = ns;
      return e;
    });
  if (!gone)
    return std::move(gone.error());
  return json::serialize(json::object{{"deleted", r.name}});
}

caf::expected<std::string> next_times(store::connection& conn, const msg::schedule_request& r) {
  auto t = timing_of(r.cron_expression, r.zone_id);
  if (!t)
    return std::move(t.error());
  int64_t from = r.start_ms;
  if (from <= 0) {
    auto now = store::server_now_ms(conn);
    if (!now)
      return std::move(now.error());
    from = *now;
  }
  auto ticks = flow::next_runs(t->cron, *t->zone, from / 1000, r.end_ms > 0 ? r.end_ms / 1000 : 0,
                               r.limit);
  json::array out;
  for (auto s : ticks)
    out.push_back(s * 1000);
  return json::serialize(out);
}

} // namespace

caf::expected<std::string> handle(store::connection& conn, const msg::schedule_request& r) {
  if (r.op == "save")
    return save(conn, r);
  if (r.op == "pause" || r.op == "resume")
    return pause_or_resume(conn, r, r.op == "pause");
  if (r.op == "delete")
    return remove(conn, r);
  if (r.op == "next")
    return next_times(conn, r);
  auto ns = namespace_of(r.namespace_id);
  if (r.op == "get")
    return read_one(conn, ns, r.name);
  auto rows = store::list_schedules(conn, ns, r.workflow_name);
  if (!rows)
    return std::move(rows.error());
  json::array out;
  for (const auto& s : *rows)
    out.push_back(to_json(s));
  return json::serialize(out);
}

} // namespace nf::engine::schedules
