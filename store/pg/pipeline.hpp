#pragma once

#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// Sends many named statements in one round trip (libpq pipeline mode) and
/// collects their results in order. Outside an explicit transaction the batch
/// is one implicit transaction (everything between two syncs). A BEGIN the
/// connection holds back (connection::defer_begin) is sent first, in the same
/// flush. Blocking mode: keep batches to a few hundred statements; for more rows
/// use one statement over `unnest($n::type[])` arrays, which is faster anyway.
class pipeline {
public:
  explicit pipeline(connection& conn) : conn_(conn) {}

  pipeline& add(const statement& st, params p);
  /// As `add`, for a statement whose pruning variant the caller chose already.
  pipeline& add_exact(const statement& st, params p);
  size_t size() const { return items_.size(); }
  connection& conn() const { return conn_; }
  /// Ends the batch with COMMIT, in the same round trip (transaction::run_and_commit). The
  /// server skips it when a statement before it fails, and the transaction stays open, in
  /// its failed state, for the caller's rollback.
  pipeline& commit_after() {
    commit_ = true;
    return *this;
  }
  /// The batch's COMMIT succeeded (commit_after).
  bool committed() const { return committed_; }

  /// Sends everything, syncs once, and returns one result per statement, or
  /// the first error (the server aborts the rest of the batch on error).
  caf::expected<std::vector<result>> run();
  /// As `run`, and on error `done` still holds the results of the statements before the
  /// failing one (a caller may have a better answer in them than the error).
  caf::expected<std::vector<result>> run(std::vector<result>& done);

private:
  struct item {
    const statement* st;
    params p;
  };
  connection& conn_;
  std::vector<item> items_;
  bool commit_ = false;
  bool committed_ = false;
};

} // namespace nf::store
