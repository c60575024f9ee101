#pragma once

#include <string>
#include <vector>

namespace nf::store {

/// A checksum that builds before checksum_text recorded for a migration (migrations/
/// legacy_checksums): the sha256 of its up file's raw text. It is accepted only while the
/// migration's SQL is still the SQL it was recorded for, whose checksum is `current`.
struct legacy_checksum {
  std::string recorded;
  std::string current;
};

/// One numbered raw-SQL migration from migrations/.
struct migration {
  std::string name;
  bool transactional; ///< false for `notx` ones (e.g. ALTER TYPE … ADD VALUE), run alone
  std::string up;
  std::string down;
  std::vector<legacy_checksum> legacy = {};
};

/// The migrations compiled into this binary, in manifest order.
const std::vector<migration>& embedded_migrations();

} // namespace nf::store
