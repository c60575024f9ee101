#pragma once

namespace nf::cmd {

/// `nodeflow sinks add|list|show|enable|disable|remove`: a namespace's webhook sinks,
/// straight on the database (like `secrets`), through the same checks and audit record as
/// `/api/webhooks/sinks` (engine/webhook_sinks.hpp). Returns the process exit code.
int run_sinks_command(int argc, char** argv);

} // namespace nf::cmd
