#pragma once

namespace nf::cmd {

/// `nodeflow users create|list|disable|passwd`: the HTTP API's users, straight in the
/// database; passwords only on stdin.
int run_users_command(int argc, char** argv);

} // namespace nf::cmd
