#include "store/pg/errors.hpp"

#include <cstring>

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace nf::store {

errc classify_sqlstate(const char* sqlstate) {
  if (sqlstate == nullptr || std::strlen(sqlstate) != 5)
    return errc::conn_broken; // no SQLSTATE at all: libpq lost the server
  std::string s{sqlstate};
  if (s == "40001" || s == "40P01")
    return errc::retry_tx;
  if (s == "23505")
    return errc::conflict;
  if (s == "NF001")
    return errc::stale; // a compare-and-set's own check ("fail_if", migration 0018)
  if (s == "NF002")
    return errc::stale; // a partition epoch fence (store/partition_fence.hpp)
  if (s.compare(0, 2, "08") == 0 || s == "57P01" || s == "57P02" || s == "57P03")
    return errc::conn_broken; // connection exceptions, admin/crash shutdown
  // The server closed the session: idle in a transaction (or idle) past its timeout.
  if (s == "25P03" || s == "57P05")
    return errc::conn_broken;
  // statement_timeout (or a cancel) and lock_timeout: the statement gave up, the
  // connection is fine, and the same work may pass later.
  if (s == "57014" || s == "55P03")
    return errc::unavailable;
  if (s.compare(0, 2, "22") == 0 || s == "23502" || s == "23503" || s == "23514")
    return errc::invalid; // data exceptions and constraint violations name bad input
  return errc::internal;
}

} // namespace nf::store
