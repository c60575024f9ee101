// nodeflow: one binary for the node, the operator CLI and the tools.
#include <cstring>
#include <iostream>
#include <string>

#include "cmd/audit_command.hpp"
#include "cmd/client_commands.hpp"
#include "cmd/config_command.hpp"
#include "cmd/keys_command.hpp"
#include "cmd/migrate_command.hpp"
#include "cmd/partitions_command.hpp"
#include "cmd/secrets_command.hpp"
#include "cmd/sinks_command.hpp"
#include "cmd/serve_command.hpp"
#include "cmd/users_command.hpp"
#include "cmd/validate_command.hpp"
#include "cmd/worker_command.hpp"
#include "engine/script/sandbox.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: nodeflow <command> [options]\n"
         "\n"
         "node and database:\n"
         "  serve --dsn DSN [--port N] [--config F] [--migrate] [--auth on|off] [--<setting> V]...\n"
         "                                   run a node (prints `listening HOST:PORT`)\n"
         "  migrate [--dsn DSN] [--status]   apply database migrations (or list them)\n"
         "  keys create --dsn DSN --role R [--namespace NS] [--expires-in 30d] [--name L]\n"
         "                                   make an HTTP API key (prints keyId=… keySecret=…)\n"
         "  keys list --dsn DSN | keys revoke --dsn DSN KEYID   list (no secrets) or revoke keys\n"
         "  users create NAME --dsn DSN --role R [--namespace NS]   a user of the HTTP API\n"
         "                                   (POST /api/login); the password on stdin\n"
         "  users list|disable NAME|passwd NAME --dsn DSN   list (no hashes), disable, or set\n"
         "                                   a new password (on stdin)\n"
         "  readiness [--dsn DSN]            is the database ready for this build?\n"
         "  partitions [--dsn DSN] [--drop-expired] [--config F] [--retention.<key> N]...\n"
         "                                   create partitions ahead, drop those past retention\n"
         "  audit [--since T] [--action A] [--limit N] [--cursor C] [--json] [--dsn DSN]\n"
         "                                   administrative actions, who did them, oldest first\n"
         "  validate FILE...                 check task and workflow definition files\n"
         "  secrets keygen|put|list|remove|rotate   sealed secrets for HTTP tasks (see\n"
         "                                   `nodeflow secrets`; values only on stdin)\n"
         "  sinks add URL|list|show ID|enable ID|disable ID|remove ID [--dsn DSN]\n"
         "                                   webhook sinks of a namespace (see `nodeflow sinks`)\n"
         "  config --reference | --check F   print the reference config, or check a file\n"
         "  version                          print the version\n"
         "\n"
         "clients (talk to a running node):\n"
      << nf::cmd::client_usage()
      << "\n"
         "The DSN may also come from NODEFLOW_DSN. Exit codes: 0 ok, 1 failure, 2 usage.\n";
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
  // Not in the usage: the node starts it itself to run scripts (engine/script/sandbox.hpp).
  if (cmd == "sandbox")
    return nf::engine::script::sandbox_main();
  if (cmd == "serve")
    return nf::cmd::run_serve_command(sub_argc, sub_argv);
  if (cmd == "worker")
    return nf::cmd::run_worker_command(sub_argc, sub_argv);
  if (nf::cmd::is_client_command(cmd))
    return nf::cmd::run_client_command(cmd, sub_argc, sub_argv, std::cout, std::cerr);
  if (cmd == "keys")
    return nf::cmd::run_keys_command(sub_argc, sub_argv);
  if (cmd == "users")
    return nf::cmd::run_users_command(sub_argc, sub_argv);
  if (cmd == "migrate")
    return nf::cmd::run_migrate_command(sub_argc, sub_argv);
  if (cmd == "readiness")
    return nf::cmd::run_readiness_command(sub_argc, sub_argv);
  if (cmd == "partitions")
    return nf::cmd::run_partitions_command(sub_argc, sub_argv);
  if (cmd == "audit")
    return nf::cmd::run_audit_command(sub_argc, sub_argv);
  if (cmd == "config")
    return nf::cmd::run_config_command(sub_argc, sub_argv);
  if (cmd == "secrets")
    return nf::cmd::run_secrets_command(sub_argc, sub_argv);
  if (cmd == "sinks")
    return nf::cmd::run_sinks_command(sub_argc, sub_argv);
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
