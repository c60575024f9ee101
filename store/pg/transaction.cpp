#include "store/pg/transaction.hpp"

namespace nf::store {

transaction::~transaction() {
  if (active_)
    rollback();
}

caf::expected<void> transaction::begin(isolation level) {
  const char* sql = "BEGIN";
  switch (level) {
    case isolation::read_committed: break;
    case isolation::repeatable_read: sql = "BEGIN ISOLATION LEVEL REPEATABLE READ"; break;
    case isolation::serializable: sql = "BEGIN ISOLATION LEVEL SERIALIZABLE"; break;
  }
  // Sent with the transaction's first statement: one round trip less per transaction.
  // A BEGIN cannot fail on a working link, and a broken one fails that statement.
  conn_.defer_begin(sql);
  active_ = true;
  return {};
}

caf::expected<void> transaction::commit() {
  active_ = false;
  if (conn_.take_begin())
    return {}; // nothing ran: there is nothing to commit
  auto r = conn_.exec("COMMIT");
  if (r)
    return {};
  auto code = code_of(r.error());
  // A server-side answer (e.g. 40001 at commit) means it rolled back; only a
  // lost link leaves the outcome unknown.
  if (code == errc::conn_broken)
    return make_error(errc::in_doubt, "commit outcome unknown: " + message_of(r.error()));
  return std::move(r.error());
}

void transaction::rollback() {
  active_ = false;
  if (conn_.take_begin())
    return; // nothing ran
  if (conn_.ok())
    (void) conn_.exec("ROLLBACK");
}

} // namespace nf::store
