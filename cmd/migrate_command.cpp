#include "cmd/migrate_command.hpp"

#include <iostream>

#include "cmd/cli_args.hpp"
#include "store/schema/migrator.hpp"
#include "proto/errors.hpp"

namespace nf::cmd {

namespace {

std::optional<store::connection> connect_or_explain(const cli_args& args, const char* cmd) {
  auto dsn = resolve_dsn(args);
  if (dsn.empty()) {
    std::cerr << "nodeflow " << cmd << ": no database: pass --dsn DSN or set NODEFLOW_DSN\n";
    return std::nullopt;
  }
  auto conn = store::connection::open(dsn);
  if (!conn) {
    std::cerr << "nodeflow " << cmd << ": " << nf::message_of(conn.error()) << "\n";
    return std::nullopt;
  }
  return std::move(*conn);
}

int print_status(store::connection& conn) {
  store::migrator m;
  auto states = m.status(conn);
  if (!states) {
    std::cerr << "nodeflow migrate: " << nf::message_of(states.error()) << "\n";
    return 1;
  }
  size_t applied = 0;
  for (const auto& s : *states) {
    std::string mark = !s.applied ? "pending" : (s.checksum_matches ? "applied" : "CHANGED");
    std::cout << mark << "  " << s.name;
    if (s.applied_at)
      std::cout << "  " << *s.applied_at;
    std::cout << "\n";
    applied += s.applied ? 1 : 0;
  }
  std::cout << applied << " of " << store::embedded_migrations().size()
            << " migrations applied\n";
  return 0;
}

} // namespace

int run_migrate_command(int argc, char** argv) {
  std::string error;
  auto args = parse_args(argc, argv, 0, {"dsn"}, {"status"}, error);
  if (!args || !args->positional.empty()) {
    std::cerr << "nodeflow migrate: " << (args ? "unexpected argument " + args->positional[0] : error)
              << "\nusage: nodeflow migrate [--dsn DSN] [--status]\n";
    return 2;
  }
  auto conn = connect_or_explain(*args, "migrate");
  if (!conn)
    return 1;
  if (args->has("status"))
    return print_status(*conn);
  store::migrator m;
  auto applied = m.up(*conn, [](const std::string& line) { std::cout << line << std::endl; });
  if (!applied) {
    std::cerr << "nodeflow migrate: " << nf::message_of(applied.error()) << "\n";
    return 1;
  }
  if (applied->empty())
    std::cout << "database is up to date (" << store::embedded_migrations().size()
              << " migrations)\n";
  else
    std::cout << "applied " << applied->size() << " migration(s); "
              << store::embedded_migrations().size() << " of "
              << store::embedded_migrations().size() << " now applied\n";
  return 0;
}

int run_readiness_command(int argc, char** argv) {
  std::string error;
  auto args = parse_args(argc, argv, 0, {"dsn"}, {}, error);
  if (!args) {
    std::cerr << "nodeflow readiness: " << error << "\nusage: nodeflow readiness [--dsn DSN]\n";
    return 2;
  }
  auto conn = connect_or_explain(*args, "readiness");
  if (!conn)
    return 1;
  auto report = store::readiness(*conn);
  if (!report) {
    std::cerr << "nodeflow readiness: " << nf::message_of(report.error()) << "\n";
    return 1;
  }
  for (const auto& line : report->lines)
    std::cout << line << "\n";
  return report->ready ? 0 : 1;
}

} // namespace nf::cmd
