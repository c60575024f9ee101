#pragma once

#include <iosfwd>
#include <string>
#include <vector>

/// `nodeflow validate FILE…` (argv: the file list). Each file holds a task
/// definition, a workflow definition (an object with `tasks` or another field
/// only workflows have) or a JSON array
/// of either. Prints `ok` and returns 0 when every file is valid; otherwise
/// prints one line per problem, `FILE: path: message`, and returns 1.
/// Returns 2 (usage on stderr) without files.
int run_validate_command(int argc, char** argv);

/// The same over a list of files, writing to `out` (problems, ok) and `err`
/// (usage): what run_validate_command does, testable without a process.
int validate_files(const std::vector<std::string>& files, std::ostream& out, std::ostream& err);
