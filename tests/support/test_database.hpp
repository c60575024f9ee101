#pragma once

#include <string>

#include "store/pg/connection.hpp"
#include "store/pg/dsn.hpp"

namespace nf::test {

/// The DSN of the suite's Postgres 18 (NF_TEST_DSN, else the one the `pg`
/// ctest fixture started). Aborts with a clear message when there is none.
std::string server_dsn();

/// A database of its own for one test suite, created on construction (with
/// every migration applied unless `migrated` is false) and dropped on
/// destruction, so suites never see each other's rows.
class test_database {
public:
  explicit test_database(const std::string& suite, bool migrated = true);
  ~test_database();
  test_database(const test_database&) = delete;
  test_database& operator=(const test_database&) = delete;

  const std::string& dsn() const { return dsn_; }
  const std::string& name() const { return name_; }
  /// A new connection to this database (aborts on failure: tests need it).
  store::connection connect() const;

private:
  std::string name_;
  std::string dsn_;
};

using store::with_database;

} // namespace nf::test
