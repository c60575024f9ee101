#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/schema/migrations.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// One manifest entry as seen in a database.
struct migration_state {
  std::string name;
  bool applied = false;
  std::optional<std::string> applied_at;
  bool checksum_matches = true; ///< false when the applied file was changed since
};

/// The text a migration's checksum is taken over: `sql` without its comments, each run of
/// whitespace outside quoted text one space, none at either end. Quoted text (strings,
/// quoted identifiers, dollar-quoted bodies) is kept as written, comments within it too:
/// the server keeps a function's body as written. So an applied migration's comments and
/// layout can be edited, and every change the server would see is still caught.
std::string checksum_text(const std::string& sql);

/// Applies migrations in manifest order, one transaction each (`notx` ones
/// alone), recording each with the sha256 of its checksum_text. Safe when several nodes
/// migrate at once: a session advisory lock serialises them and latecomers find nothing
/// left to do. A changed applied migration is an error, as is an applied migration
/// this binary does not know. A database migrated by a build from before checksum_text
/// holds the checksums of the raw files: those the migration lists in `legacy` are
/// accepted while its SQL is unchanged.
class migrator {
public:
  using progress_fn = std::function<void(const std::string& line)>;

  explicit migrator(const std::vector<migration>& manifest = embedded_migrations())
    : manifest_(manifest) {}

  /// Applies every pending migration; returns the names applied (empty when
  /// the database was already current).
  caf::expected<std::vector<std::string>> up(connection& conn, const progress_fn& progress = {});

  /// Runs every applied migration's down script, newest first (tests, dev resets).
  caf::expected<std::vector<std::string>> down_all(connection& conn,
                                                   const progress_fn& progress = {});

  /// Applied vs manifest, in manifest order (plus unknown applied ones last).
  caf::expected<std::vector<migration_state>> status(connection& conn);

private:
  caf::expected<void> lock(connection& conn);
  void unlock(connection& conn);
  caf::expected<void> verify(connection& conn);

  const std::vector<migration>& manifest_;
};

/// Human-readable readiness of a database for this build: server, capabilities,
/// migrations applied against the manifest.
struct readiness_report {
  bool ready = false;
  std::vector<std::string> lines;
};

caf::expected<readiness_report> readiness(connection& conn,
                                          const std::vector<migration>& manifest
                                          = embedded_migrations());

} // namespace nf::store
