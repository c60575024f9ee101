#pragma once
// DSN handling shared by the tools, the tests and the benchmarks.
#include <string>

namespace nf::store {

/// The same server as `dsn`, database `db`. A URI (postgresql://user@host:port/dbname?params)
/// gets its path replaced and keeps its parameters; a key=value DSN gets `dbname=db` appended
/// (libpq lets a later key win).
std::string with_database(const std::string& dsn, const std::string& db);

} // namespace nf::store
