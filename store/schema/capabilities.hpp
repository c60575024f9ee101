#pragma once

#include <string>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

struct server_info {
  int version_num = 0;      ///< server_version_num, e.g. 180004
  std::string version;      ///< server_version, e.g. "18.4"
  std::string io_method;    ///< "worker", "sync", "io_uring"
};

/// Refuses servers older than Postgres 18 (uuidv7() and asynchronous I/O are
/// load-bearing), then proves `SELECT uuidv7()` works. The error says what was
/// found and what is needed.
caf::expected<server_info> check_capabilities(connection& conn);

} // namespace nf::store
