#pragma once

// "AuditEvents" (migration 0024): who did which administrative action, from where, on what.
// Append-only by construction: this file has an insert and reads, and nothing else; the
// table refuses UPDATE, DELETE and TRUNCATE, and rows leave only with an expired month's
// partition (schema/partitions.*).
//
// An action is audited in the transaction that does it, so an action that fails (rolls
// back) leaves no row and one that commits leaves exactly one. Call append_audit with the
// connection of that open transaction, or add_audit to the pipeline that carries the
// action's writes.

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/json/object.hpp>
#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

class pipeline;

struct audit_event {
  std::string actor;   ///< who: "key:<id>", "user:<name>", "anonymous"
  std::string origin;  ///< which door, from where: "http 127.0.0.1:5312", "caf <node>"
  /// The namespace acted in (its name at the time is recorded); none for an action
  /// outside any namespace.
  std::optional<namespace_id> ns;
  std::string action;  ///< "definitions.register", "workflow.pause", …
  std::string target;  ///< a workflow id, "workflow:name@version", dead letter ids, …
  /// What else identifies the action (a reason, a signal's name). Named field by field by
  /// the writer, never a request body copied in: no secrets, no hashes, no sealed values.
  boost::json::object details;
};

/// Writes `events` in one statement, in their order, inside the caller's transaction.
/// Refuses (`invalid`, naming the field) an event without actor, origin or action.
caf::expected<void> append_audits(connection& conn, const std::vector<audit_event>& events);
caf::expected<void> append_audit(connection& conn, const audit_event& event);

/// Adds the same statement to a pipeline, to go with the action's own writes in one round
/// trip; a refused event is reported at once and nothing is added.
caf::expected<void> add_audits(pipeline& p, const std::vector<audit_event>& events);

/// Runs `action` (store calls on the connection it is given, opening no transaction of their
/// own) and records `event_of(its result)` (`event_of()` for a result without a value) in one
/// transaction: both commit, or neither.
template <class F, class E>
auto audited(connection& conn, F&& action, E&& event_of) -> decltype(action(conn)) {
  using result_type = decltype(action(conn));
  return perform(conn, [&](transaction& tx) -> result_type {
    auto r = action(tx.conn());
    if (!r)
      return r;
    caf::expected<void> a;
    if constexpr (std::is_same_v<result_type, caf::expected<void>>)
      a = append_audit(tx.conn(), event_of());
    else
      a = append_audit(tx.conn(), event_of(*r));
    if (!a)
      return std::move(a.error());
    return r;
  });
}

struct audit_query {
  std::optional<int64_t> since_ms;   ///< "at" >= this (ms since the epoch)
  std::optional<std::string> action; ///< exactly this action
  std::optional<std::string> after;  ///< the cursor: the last id of the previous page
  int limit = 100;                   ///< 1 … 1000
  /// Only this namespace's actions (by its name); "default" also sees those outside any
  /// namespace (namespaces, keys, users). None: every action.
  std::optional<std::string> namespace_name;
};

struct audit_row {
  std::string id;
  int64_t at_ms = 0;
  std::string actor;
  std::string origin;
  std::optional<std::string> ns; ///< the namespace's name then
  std::string action;
  std::string target;
  std::string details; ///< JSON text
};

struct audit_page {
  std::vector<audit_row> rows;       ///< oldest first
  std::optional<std::string> next;   ///< the cursor for the next page, when there may be one
};

caf::expected<audit_page> read_audit(connection& conn, const audit_query& q);

} // namespace nf::store
