// nodeflow: one binary for the node, the operator CLI and the tools.
#include <cstring>
#include <iostream>
#include <string>

#include "cmd/config_command.hpp"
#include "cmd/migrate_command.hpp"
#include "cmd/validate_command.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: nodeflow <command> [options]\n"
         "\n"
         "commands:\n"
         "  migrate [--dsn DSN] [--status]   apply database migrations (or list them)\n"
         "  readiness [--dsn DSN]            is the database ready for this build?\n"
         "  validate FILE...                 check task and workflow definition files\n"
         "  config --reference | --check F   print the reference config, or check a file\n"
         "  version                          print the version\n"
         "\n"
         "The DSN may also come from NODEFLOW_DSN.\n";
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  std::string cmd = argv[1];
  // Subcommands see only their own arguments.
  int sub_argc = argc - 2;
  char** sub_argv = argv + 2;
  if (cmd == "migrate")
    return nf::cmd::run_migrate_command(sub_argc, sub_argv);
  if (cmd == "readiness")
    return nf::cmd::run_readiness_command(sub_argc, sub_argv);
  if (cmd == "config")
    return nf::cmd::run_config_command(sub_argc, sub_argv);
  if (cmd == "validate")
    return run_validate_command(sub_argc, sub_argv);
  if (cmd == "version" || cmd == "--version") {
    std::cout << "nodeflow " << NODEFLOW_VERSION << "\n";
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    usage(std::cout);
    return 0;
  }
  std::cerr << "nodeflow: unknown command '" << cmd << "'\n";
  usage(std::cerr);
  return 2;
}
