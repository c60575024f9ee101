#pragma once

namespace nf::cmd {

/// `nodeflow migrate [--dsn DSN] [--status]`: applies pending migrations and
/// prints what it did, or with --status prints applied vs manifest.
int run_migrate_command(int argc, char** argv);

/// `nodeflow readiness [--dsn DSN]`: the database's readiness for this build;
/// exit 0 when ready.
int run_readiness_command(int argc, char** argv);

} // namespace nf::cmd
