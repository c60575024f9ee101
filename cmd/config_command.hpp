#pragma once

namespace nf::cmd {

/// `nodeflow config --reference` prints the reference config;
/// `nodeflow config --check FILE` validates a config file (exit 0 when valid).
int run_config_command(int argc, char** argv);

} // namespace nf::cmd
