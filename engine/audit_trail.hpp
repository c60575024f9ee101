#pragma once

// The audit record's side of the administrative operations: who (actor, origin) as the
// door passed it, turned into a store::audit_event written in the action's own
// transaction (store/audit.hpp). Each operation names its action and target here, so the
// vocabulary is in one place:
//   definitions.register  target "workflow:<name>@<version>,task:<name>,…"
//   definitions.delete    target "task:<name>" | "workflow:<name>@<version>"
//   workflow.<op>         op pause|resume|terminate|retry|rerun|restart, target the id
//   workflow.remove       target the id, details {"status","tasks","events"}, "reason" if given
//   workflow.signal       target the workflow id, details {"signal"}
//   workflow.task_update  (a WAIT completed by its ref) target the id, {"taskRef","status"}
//   deadletters.replay    target the ids ("1,2,3") or "all", details {"replayed"}
//   sinks.create          target "sink:<id>", details {"url" (no query),"enabled","signingSecretSet"}
//   sinks.update          target "sink:<id>", details {"fields":[names written], "url",
//                         "enabled", "signingSecretSet" when written}
//   sinks.remove          target "sink:<id>"
//   schedules.save        target "schedule:<name>", details {"created","cronExpression",
//                         "zoneId","workflowName","paused"} (engine/schedules/schedules.cpp)
//   schedules.<op>        op pause|resume|delete, target "schedule:<name>"; pause {"reason"}
//   vectors.delete        target "vectors:<index>/<document id>"
//   vectors.drop          target "vectors:<index>", details {"removedDocuments"}
// Payloads, inputs and outputs are never copied into details: they may carry secrets.

#include <string>

#include <boost/json/object.hpp>
#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/audit.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// An event for `action` on `target` by (actor, origin). The api actor always fills both;
/// a caller in this process that did not (a test, a tool) is "anonymous" from "local".
store::audit_event audit_event(const std::string& actor, const std::string& origin,
                               std::string action, std::string target,
                               boost::json::object details = {});

/// A page of the audit record as `{"events":[…],"nextCursor":id|null}` (oldest first).
caf::expected<std::string> read_audit(store::connection& conn, const msg::audit_query& q);

} // namespace nf::engine
