#include "cmd/partitions_command.hpp"

#include <cstdlib>
#include <iostream>

#include "cmd/cli_args.hpp"
#include "store/schema/partitions.hpp"
#include "proto/errors.hpp"

namespace nf::cmd {

namespace {

int fail(const caf::error& err) {
  std::cerr << "nodeflow partitions: " << nf::message_of(err) << "\n";
  return 1;
}

} // namespace

int run_partitions_command(int argc, char** argv) {
  std::string error;
  auto args = parse_args(argc, argv, 0, {"dsn", "audit-months-retained"}, {"drop-expired"},
                         error);
  if (!args || !args->positional.empty()) {
    std::cerr << "nodeflow partitions: "
              << (args ? "unexpected argument " + args->positional[0] : error)
              << "\nusage: nodeflow partitions [--dsn DSN] [--drop-expired] "
                 "[--audit-months-retained N (default 84)]\n";
    return 2;
  }
  auto dsn = resolve_dsn(*args);
  if (dsn.empty()) {
    std::cerr << "nodeflow partitions: no database: pass --dsn DSN or set NODEFLOW_DSN\n";
    return 1;
  }
  auto conn = store::connection::open(dsn);
  if (!conn)
    return fail(conn.error());
  auto now = store::server_now(*conn);
  if (!now)
    return fail(now.error());
  store::partition_settings settings;
  if (auto months = args->value("audit-months-retained")) {
    // The same bounds as maintenance.audit_months_retained.
    char* end = nullptr;
    long n = std::strtol(months->c_str(), &end, 10);
    if (months->empty() || *end != '\0' || n < 1 || n > 1200) {
      std::cerr << "nodeflow partitions: --audit-months-retained: expected an integer 1 … "
                   "1200, got \"" << *months << "\"\n";
      return 2;
    }
    settings.audit_months_retained = static_cast<int>(n);
  }
  store::partition_manager mgr{settings};
  auto created = mgr.ensure_ahead(*conn, *now);
  if (!created)
    return fail(created.error());
  for (const auto& name : *created)
    std::cout << "created " << name << "\n";
  std::cout << created->size() << " partition(s) created\n";
  if (!args->has("drop-expired"))
    return 0;
  auto dropped = mgr.drop_expired(*conn, *now);
  if (!dropped)
    return fail(dropped.error());
  for (const auto& name : dropped->dropped)
    std::cout << "dropped " << name << "\n";
  for (const auto& k : dropped->kept)
    std::cout << "kept " << k.name << " (" << k.reason << ")\n";
  std::cout << dropped->dropped.size() << " partition(s) dropped, " << dropped->kept.size()
            << " kept past retention, " << dropped->timers_moved << " pending timer(s) moved\n";
  return 0;
}

} // namespace nf::cmd
