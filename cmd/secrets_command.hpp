#pragma once

namespace nf::cmd {

/// `nodeflow secrets keygen|put|list|remove|rotate`: sealed secrets, straight on the
/// database (like `migrate`); the master key comes from the config (--config FILE) or
/// --secrets.master_key_file FILE. Returns the process exit code.
int run_secrets_command(int argc, char** argv);

} // namespace nf::cmd
