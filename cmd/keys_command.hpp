#pragma once

namespace nf::cmd {

/// `nodeflow keys create|list|revoke`: the HTTP API's keys, straight in the database.
int run_keys_command(int argc, char** argv);

} // namespace nf::cmd
