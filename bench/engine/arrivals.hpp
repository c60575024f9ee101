#pragma once

// What every worker process of a run records, over either transport: when each task
// reached it (CLOCK_MONOTONIC, the driver's clock), written to --out as
// `workflowId ref recvNs` lines for the driver's dispatch percentiles (its own clock
// readings are mono_ns too).

#include <cstdint>
#include <string>
#include <vector>

namespace nf::bench {

struct arrival {
  std::string workflow_id;
  std::string ref;
  int64_t recv_ns;
};

/// Now on the monotonic clock, in ns.
int64_t mono_ns();

/// Writes the arrivals to `path`; false when it cannot be written.
bool write_arrivals(const std::string& path, const std::vector<arrival>& arrivals);

} // namespace nf::bench
