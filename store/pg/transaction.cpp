#include "store/pg/transaction.hpp"

#include "store/pg/pipeline.hpp"

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
  if (committed_)
    return {};
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

caf::expected<std::vector<result>> transaction::run_and_commit(pipeline& p) {
  auto r = p.commit_after().run();
  if (p.committed()) {
    active_ = false;
    committed_ = true;
    return r;
  }
  if (!r && code_of(r.error()) == errc::conn_broken) {
    active_ = false;
    return make_error(errc::in_doubt, "commit outcome unknown: " + message_of(r.error()));
  }
  return r;
}

void transaction::rollback() {
  active_ = false;
  if (conn_.take_begin())
    return; // nothing ran
  if (conn_.ok())
    (void) conn_.exec("ROLLBACK");
}

} // namespace nf::store
