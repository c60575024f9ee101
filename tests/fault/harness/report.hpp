#pragma once

// The run's results: a plain table on stdout, and with --report the markdown page
// docs/reliability.md (every row: the fault, its bar, the figure measured, pass or fail,
// and the command that runs it again).

#include <string>
#include <vector>

#include "tests/fault/harness/options.hpp"
#include "tests/fault/harness/scenarios.hpp"

namespace nf::fault {

void print_rows(const std::vector<row>& rows);

/// Writes the markdown report to `path`; false (with a message) when it cannot.
bool write_report(const std::string& path, const options& o, const std::vector<row>& rows,
                  double seconds, const std::string& command_line);

} // namespace nf::fault
