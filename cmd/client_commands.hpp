#pragma once

#include <iosfwd>
#include <string>

namespace nf::cmd {

/// True for the subcommands that talk to a node through the client library:
/// defs, start, get, events, pause, resume, terminate, retry, rerun, restart,
/// signal, search, deadletters, status.
bool is_client_command(const std::string& name);

/// Runs one of them; `argv` holds only its own arguments. The node comes from
/// `--node HOST:PORT`, else NODEFLOW_NODE, else 127.0.0.1:4510. Exit codes:
/// 0 ok, 1 failure (the error on `err`), 2 usage (nothing was sent).
int run_client_command(const std::string& name, int argc, char** argv, std::ostream& out,
                       std::ostream& err);

/// Usage lines of every client subcommand, for `nodeflow help`.
const char* client_usage();

} // namespace nf::cmd
