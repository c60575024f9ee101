#pragma once

#include <type_traits>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"
#include "proto/errors.hpp"

namespace nf::store {

class pipeline;

enum class isolation { read_committed, repeatable_read, serializable };

/// A transaction on one connection. Rolls back in its destructor unless
/// committed. A commit whose outcome is unknown (link lost while COMMIT was in
/// flight) reports `in_doubt`, which `perform` never retries.
class transaction {
public:
  explicit transaction(connection& conn) : conn_(conn) {}
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  ~transaction();

  caf::expected<void> begin(isolation level = isolation::read_committed);
  /// Commits; nothing to do when run_and_commit committed already.
  caf::expected<void> commit();
  void rollback();
  /// Runs `p` with this transaction's COMMIT in the same round trip, for a caller with
  /// nothing left to check on the results before committing: every check that must hold
  /// raises its error in the statements themselves. On an error the transaction was not
  /// committed (and is rolled back as usual), except that a link lost while the batch was
  /// in flight leaves the outcome unknown: `in_doubt`.
  caf::expected<std::vector<result>> run_and_commit(pipeline& p);
  bool committed() const { return committed_; }

  connection& conn() { return conn_; }
  bool active() const { return active_; }

private:
  connection& conn_;
  bool active_ = false;
  bool committed_ = false;
};

/// Runs `fn(transaction&) -> caf::expected<T>` in a fresh transaction and
/// commits. The whole transaction is rerun only on `retry_tx` (40001, 40P01),
/// at most `max_attempts` times; every other error is returned as is.
template <class F>
auto perform(connection& conn, F&& fn, int max_attempts = 8,
             isolation level = isolation::read_committed)
  -> decltype(fn(std::declval<transaction&>())) {
  using result_type = decltype(fn(std::declval<transaction&>()));
  for (int attempt = 1;; ++attempt) {
    transaction tx{conn};
    caf::error err;
    if (auto b = tx.begin(level); !b) {
      err = b.error();
    } else {
      auto r = fn(tx);
      if (!r) {
        err = r.error();
      } else if (auto c = tx.commit(); !c) {
        err = c.error();
      } else {
        return r;
      }
    }
    if (code_of(err) != errc::retry_tx || attempt >= max_attempts)
      return result_type{std::move(err)};
  }
}

} // namespace nf::store
