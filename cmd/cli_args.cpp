#include "cmd/cli_args.hpp"

#include <algorithm>
#include <cstdlib>

namespace nf::cmd {

std::optional<std::string> cli_args::value(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end() || it->second.empty())
    return std::nullopt;
  return it->second.back();
}

std::vector<std::string> cli_args::all(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? std::vector<std::string>{} : it->second;
}

bool cli_args::has(const std::string& name) const {
  return switches.count(name) > 0 || values.count(name) > 0;
}

std::optional<cli_args> parse_args(int argc, char** argv, int first,
                                   const std::vector<std::string>& value_flags,
                                   const std::vector<std::string>& switch_flags,
                                   std::string& error) {
  auto takes_value = [&](const std::string& n) {
    return std::find(value_flags.begin(), value_flags.end(), n) != value_flags.end();
  };
  auto is_switch = [&](const std::string& n) {
    return std::find(switch_flags.begin(), switch_flags.end(), n) != switch_flags.end();
  };
  cli_args out;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      out.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (is_switch(name) && !inline_value) {
      out.switches[name] = true;
    } else if (takes_value(name)) {
      if (inline_value) {
        out.values[name].push_back(*inline_value);
      } else if (i + 1 < argc) {
        out.values[name].push_back(argv[++i]);
      } else {
        error = "--" + name + " needs a value";
        return std::nullopt;
      }
    } else {
      error = "unknown option --" + name;
      return std::nullopt;
    }
  }
  return out;
}

std::string resolve_dsn(const cli_args& args) {
  if (auto d = args.value("dsn"))
    return *d;
  if (const char* env = std::getenv("NODEFLOW_DSN"))
    return env;
  return {};
}

} // namespace nf::cmd
