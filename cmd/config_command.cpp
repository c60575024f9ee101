#include "cmd/config_command.hpp"

#include <iostream>

#include "cmd/cli_args.hpp"
#include "cmd/serve_config.hpp"
#include "config/settings.hpp"

namespace nf::cmd {

int run_config_command(int argc, char** argv) {
  std::string error;
  auto args = parse_args(argc, argv, 0, {"check"}, {"reference"}, error);
  if (!args || (!args->has("reference") && !args->has("check"))) {
    std::cerr << "nodeflow config: " << (args ? "nothing to do" : error)
              << "\nusage: nodeflow config --reference | --check FILE\n";
    return 2;
  }
  if (args->has("reference")) {
    std::cout << config::reference_config();
    return 0;
  }
  auto values = config::values::defaults();
  auto problems = config::load_file(*args->value("check"), values);
  if (problems.empty())
    read_egress(values, problems);
  if (problems.empty())
    net::read_cluster_tls(values, problems);
  if (problems.empty())
    net::check_advertise(values, problems);
  for (const auto& p : problems)
    std::cerr << p << "\n";
  if (!problems.empty())
    return 1;
  std::cout << "ok\n";
  return 0;
}

} // namespace nf::cmd
