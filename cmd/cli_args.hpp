#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nf::cmd {

/// Parsed `--name value`, `--name=value` and bare `--switch` arguments plus
/// positionals. Which names take a value is declared, so a typo is an error
/// naming the flag rather than a silently ignored argument.
struct cli_args {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;
  std::map<std::string, bool> switches;

  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
  bool has(const std::string& name) const;
};

/// Parses argv[first..argc); on a bad argument returns nullopt and sets `error`.
std::optional<cli_args> parse_args(int argc, char** argv, int first,
                                   const std::vector<std::string>& value_flags,
                                   const std::vector<std::string>& switch_flags,
                                   std::string& error);

/// The Postgres DSN: `--dsn`, else `NODEFLOW_DSN`; empty when neither is set.
std::string resolve_dsn(const cli_args& args);

} // namespace nf::cmd
