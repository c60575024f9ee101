#pragma once

namespace nf::cmd {

/// `nodeflow serve`: checks the database, starts the engine node and the
/// client protocol, prints `listening HOST:PORT` on stdout once clients can
/// connect, and runs until SIGTERM or SIGINT (then stops cleanly, exit 0).
/// Exit 2 on bad flags or config (naming the key), 1 on any other failure.
int run_serve_command(int argc, char** argv);

} // namespace nf::cmd
