#pragma once
// DSN handling shared by the tools, the tests and the benchmarks.
#include <string>

namespace nf::store {

/// The same server as `dsn`, database `db`. A URI (postgresql://user@host:port/dbname?params)
/// gets its path replaced and keeps its parameters; a key=value DSN gets `dbname=db` appended
/// (libpq lets a later key win).
std::string with_database(const std::string& dsn, const std::string& db);

/// `text` with every password it carries replaced by "***": a URI's `user:PASSWORD@`, a
/// `password=VALUE` (key=value form, quoted or not, or a URI query parameter) and a
/// `PGPASSWORD=VALUE`. Everything a DSN reaches (output, logs, error messages) goes through
/// this first.
std::string redact_secrets(const std::string& text);

/// redact_secrets(text), and also every occurrence of the password `dsn` names (as libpq
/// reads it): libpq's own messages may quote it without its key. When `dsn` carries a
/// password but does not parse, libpq's complaint may quote any piece of it, so the whole
/// text is withheld.
std::string redact_secrets(const std::string& text, const std::string& dsn);

} // namespace nf::store
