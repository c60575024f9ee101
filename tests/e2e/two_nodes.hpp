#pragma once

// Two `nodeflow serve` processes sharing the partitions of one database, and a workload that
// crosses them (e2e.cluster, e2e.mtls): a flow with a task on a queue each node leases, half
// its workflows started through each node, every one echoed by workers of one node only.

#include <string>
#include <utility>
#include <vector>

#include "net/client/client.hpp"
#include "tests/e2e/e2e_fixture.hpp"

namespace nf::test {

/// Waits until the nodes at `addr1` and `addr2` hold half of `partitions` each.
bool await_even_split(e2e_fixture& f, const std::string& addr1, const std::string& addr2,
                      int partitions);

/// A queue named `prefix`N leased on each node, as the partitions stand; defines `flow`: the
/// first's task, then the second's, with the input's `n` as the output's.
std::pair<std::string, std::string> define_crossing_flow(e2e_fixture& f, const std::string& flow,
                                                         const std::string& prefix,
                                                         const std::string& addr1,
                                                         const std::string& addr2,
                                                         int partitions);

/// Starts 2n workflows of `flow` with inputs {"n": i}: the first n through the fixture's api,
/// the rest through `second`; checks that both nodes own some of them. Their ids, in order.
std::vector<std::string> start_through_both(e2e_fixture& f, client& second,
                                            const std::string& flow, int n, int partitions);

/// Waits for each workflow to complete with {"n": its place in `ids`} as its output.
void expect_echoed(e2e_fixture& f, const std::vector<std::string>& ids);

} // namespace nf::test
