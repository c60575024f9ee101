#pragma once

#include <string>

namespace nf::bench {

struct ceiling_result {
  int batch = 0;
  int connections = 0;
  double seconds = 0;
  long long lifecycles = 0;
  double lifecycles_per_s = 0;
};

/// The SQL-only lifecycle on its own scratch schema, `connections` threads each with
/// its own connection, `batch` lifecycles per transaction, measured for `seconds`.
ceiling_result run_ceiling(const std::string& dsn, int batch, int connections, double seconds);

} // namespace nf::bench
