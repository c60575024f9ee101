#include "cmd/partitions_command.hpp"

#include <iostream>

#include "actors/maintenance/retention.hpp"
#include "cmd/cli_args.hpp"
#include "config/settings.hpp"
#include "proto/errors.hpp"
#include "store/schema/partitions.hpp"

namespace nf::cmd {

namespace {

int fail(const caf::error& err) {
  std::cerr << "nodeflow partitions: " << nf::message_of(err) << "\n";
  return 1;
}

const char* usage =
  "usage: nodeflow partitions [--dsn DSN] [--drop-expired] [--config FILE]\n"
  "         [--retention.executions_months N] [--retention.history_months N]\n"
  "         [--retention.timers_hours N] [--retention.audit_months N]\n"
  "Retention comes from the settings, as a node's maintenance reads them: defaults, then\n"
  "the file, then the flags.\n";

constexpr const char* retention_keys[] = {"retention.executions_months",
                                          "retention.history_months",
                                          "retention.timers_hours", "retention.audit_months"};

} // namespace

int run_partitions_command(int argc, char** argv) {
  std::string error;
  std::vector<std::string> value_flags{"dsn", "config", "audit-months-retained"};
  for (const auto* k : retention_keys)
    value_flags.emplace_back(k);
  auto args = parse_args(argc, argv, 0, value_flags, {"drop-expired"}, error);
  if (!args || !args->positional.empty()) {
    std::cerr << "nodeflow partitions: "
              << (args ? "unexpected argument " + args->positional[0] : error) << "\n"
              << usage;
    return 2;
  }
  if (args->has("audit-months-retained")) {
    std::cerr << "nodeflow partitions: --audit-months-retained is now "
                 "--retention.audit_months (the setting retention.audit_months)\n";
    return 2;
  }
  auto settings = config::values::defaults();
  if (auto file = args->value("config")) {
    auto problems = config::load_file(*file, settings);
    for (const auto& p : problems)
      std::cerr << "nodeflow partitions: " << p << "\n";
    if (!problems.empty())
      return 2;
  }
  for (const auto* key : retention_keys)
    if (auto v = args->value(key))
      if (auto problem = settings.set(key, *v, std::string{"--"} + key)) {
        std::cerr << "nodeflow partitions: " << *problem << "\n";
        return 2;
      }
  auto dsn = resolve_dsn(*args);
  if (dsn.empty())
    dsn = settings.get(config::keys::db_dsn);
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
  store::partition_manager mgr{actors::retention_of(settings)};
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
