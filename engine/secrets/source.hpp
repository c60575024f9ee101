#pragma once

// Where the system-task runner reads secrets: the "Secrets" table through its own
// connection, unsealed with the node's keyring. A node without secrets.master_key_file
// answers every lookup with an error saying so. Thread-safe (the runner's task workers
// are detached threads); one lookup is one short statement.

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "engine/secrets/keyring.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine::secrets {

class source {
public:
  /// `ring` is the keyring, or why there is none (the first lookup reports it).
  source(std::string dsn, caf::expected<keyring> ring);

  /// The plain value of `name` in `ns`; `not_found` naming the secret when it is not
  /// defined, `invalid` when it cannot be unsealed, `unavailable` for the database.
  caf::expected<std::string> value(const namespace_id& ns, const std::string& name);

private:
  std::string dsn_;
  caf::expected<keyring> ring_;
  std::mutex mutex_;
  std::optional<store::connection> conn_;
};

} // namespace nf::engine::secrets
