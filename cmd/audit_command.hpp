#pragma once

namespace nf::cmd {

/// `nodeflow audit [--since T] [--action A] [--limit N] [--cursor C] [--json] [--dsn DSN]`:
/// a page of the audit record (store/audit.hpp), oldest first, read from the database as
/// GET /api/audit reads it. T is ms since the epoch or a UTC date `YYYY-MM-DD[THH:MM:SS]`.
/// Prints one line per action, then the cursor of the next page when there is one.
int run_audit_command(int argc, char** argv);

} // namespace nf::cmd
