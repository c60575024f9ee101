#pragma once
// How every connection to Postgres guards against a dead, unreachable or stuck server: a
// half-open link (a server that vanished without a FIN, a partition that drops packets)
// would otherwise block its owner for good, and a blocked membership keeps a node serving
// partitions it may no longer own.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace nf::store {

class connection;

/// The libpq connection keys and session settings every connection gets, unless its DSN
/// names them itself (the DSN wins). 0 leaves a value out (libpq's or the server's own).
struct link_settings {
  int64_t connect_timeout_s = 10;      ///< libpq connect_timeout (it reads 1 as 2)
  int64_t keepalives_idle_s = 10;      ///< TCP keepalives: first probe after this idle time
  int64_t keepalives_interval_s = 3;   ///< between unanswered probes
  int64_t keepalives_count = 3;        ///< unanswered probes before the link is dead
  int64_t tcp_user_timeout_ms = 20000; ///< sent data unacknowledged this long: link dead
  int64_t statement_timeout_ms = 60000;
  int64_t lock_timeout_ms = 30000;
  int64_t idle_in_transaction_timeout_ms = 60000;
};

/// What connection::open(dsn) applies. Set once at start-up, before any connection is
/// opened and before threads start (`nodeflow serve` sets it from the `db.` settings);
/// until then it is link_settings{}.
void set_link_defaults(const link_settings& s);
const link_settings& link_defaults();

/// A session setup (store::session's setup_fn) for work that may legitimately run long, a
/// maintenance pass moving a month of rows: no statement timeout on this connection.
/// The lock timeout stays, so such work never queues the engine behind it for long.
caf::expected<void> without_statement_timeout(connection& conn);

/// A session setup for the API's reads (searches, counts): every execution of a prepared
/// statement is planned with its values. A generic plan cannot tell a status no execution
/// has from one they all have, and scans a million rows for the first; the planning this
/// costs (a fraction of a millisecond) is nothing beside that.
caf::expected<void> plan_each_execution(connection& conn);

/// A libpq keyword and its value.
struct conn_key {
  std::string key;
  std::string value;
};

/// The keys `s` adds to `dsn`: each libpq key the DSN (or its environment variable,
/// PGCONNECT_TIMEOUT) does not set, and `options` with the session settings (`-c
/// statement_timeout=…`, sent in the startup packet: no round trip) that the DSN's own
/// `options` (or PGOPTIONS) does not set, followed by those options. Empty when `dsn` does
/// not parse: connecting then reports why.
std::vector<conn_key> link_keys(const std::string& dsn, const link_settings& s);

} // namespace nf::store
