// `nodeflow keys`: API keys made, listed and revoked straight in the database (like
// `migrate`), so the first admin key needs no running node. A key's secret is printed
// once, by `create`, and never stored: only its hash is.

#include "cmd/keys_command.hpp"

#include <iostream>
#include <optional>
#include <string>

#include "cmd/cli_args.hpp"
#include "cmd/cli_audit.hpp"
#include "engine/auth/credentials.hpp"
#include "proto/errors.hpp"
#include "store/api_keys.hpp"

namespace nf::cmd {

namespace {

const char* keys_usage() {
  return "usage: nodeflow keys create --dsn DSN --role admin|operator|worker|reader "
         "[--namespace NAME] [--expires-in N(s|m|h|d)] [--name LABEL]\n"
         "       nodeflow keys list --dsn DSN\n"
         "       nodeflow keys revoke --dsn DSN KEYID\n";
}

// "30d", "12h", "15m", "3600s" or a bare number of seconds; nullopt when malformed.
std::optional<int64_t> duration_seconds(const std::string& text) {
  if (text.empty())
    return std::nullopt;
  int64_t unit = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'd': unit = 86400; digits.pop_back(); break;
    case 'h': unit = 3600; digits.pop_back(); break;
    case 'm': unit = 60; digits.pop_back(); break;
    case 's': digits.pop_back(); break;
    default: break;
  }
  if (digits.empty() || digits.size() > 9
      || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  auto n = std::stoll(digits) * unit;
  return n > 0 ? std::optional<int64_t>{n} : std::nullopt;
}

std::optional<store::connection> connect(const cli_args& args) {
  auto dsn = resolve_dsn(args);
  if (dsn.empty()) {
    std::cerr << "nodeflow keys: no database: pass --dsn DSN or set NODEFLOW_DSN\n";
    return std::nullopt;
  }
  auto conn = store::connection::open(dsn);
  if (!conn) {
    std::cerr << "nodeflow keys: " << message_of(conn.error()) << "\n";
    return std::nullopt;
  }
  return std::move(*conn);
}

int create(const cli_args& args) {
  store::new_api_key k;
  auto role = args.value("role");
  if (!role) {
    std::cerr << "nodeflow keys create: --role is required (admin, operator, worker, reader)\n"
              << keys_usage();
    return 2;
  }
  k.role = *role;
  k.namespace_name = args.value("namespace").value_or("default");
  k.name = args.value("name").value_or("");
  if (auto e = args.value("expires-in")) {
    k.expires_in_s = duration_seconds(*e);
    if (!k.expires_in_s) {
      std::cerr << "nodeflow keys create: --expires-in: '" << *e
                << "' is not a duration (e.g. 30d, 12h, 15m, 3600s)\n";
      return 2;
    }
  }
  auto conn = connect(args);
  if (!conn)
    return 1;
  auto secret = engine::auth::new_secret_hex();
  k.secret_hash_hex = engine::auth::hash_secret(secret);
  auto id = store::audited(
    *conn, [&](store::connection& c) { return store::insert_api_key(c, k); },
    [&](const std::string& made) {
      return cli_audit_event("keys.create", "key:" + made,
                             {{"role", k.role}, {"namespace", k.namespace_name}, {"name", k.name}});
    });
  if (!id) {
    std::cerr << "nodeflow keys create: " << message_of(id.error()) << "\n";
    return 1;
  }
  std::cout << "created key " << *id << " role=" << k.role << " namespace=" << k.namespace_name
            << "; the secret is shown this once (only its hash is stored)\n"
            << "keyId=" << *id << " keySecret=" << secret << std::endl;
  return 0;
}

int list(const cli_args& args) {
  auto conn = connect(args);
  if (!conn)
    return 1;
  auto keys = store::list_api_keys(*conn);
  if (!keys) {
    std::cerr << "nodeflow keys list: " << message_of(keys.error()) << "\n";
    return 1;
  }
  std::cout << "keyId role namespace created expires revoked name\n";
  for (const auto& k : *keys)
    std::cout << k.id << " " << k.role << " " << k.namespace_name << " " << k.created_at << " "
              << k.expires_at.value_or("-") << " " << k.revoked_at.value_or("-") << " "
              << (k.name.empty() ? "-" : k.name) << "\n";
  return 0;
}

int revoke(const cli_args& args) {
  if (args.positional.size() != 1) {
    std::cerr << "nodeflow keys revoke: name one KEYID\n" << keys_usage();
    return 2;
  }
  auto conn = connect(args);
  if (!conn)
    return 1;
  const auto& key = args.positional[0];
  if (auto ok = store::audited(
        *conn, [&](store::connection& c) { return store::revoke_api_key(c, key); },
        [&] { return cli_audit_event("keys.revoke", "key:" + key); });
      !ok) {
    std::cerr << "nodeflow keys revoke: " << message_of(ok.error()) << "\n";
    return 1;
  }
  std::cout << "revoked key " << args.positional[0] << "\n";
  return 0;
}

} // namespace

int run_keys_command(int argc, char** argv) {
  if (argc < 1) {
    std::cerr << keys_usage();
    return 2;
  }
  std::string sub = argv[0];
  std::string error;
  std::vector<std::string> flags{"dsn"};
  if (sub == "create")
    flags.insert(flags.end(), {"role", "namespace", "expires-in", "name"});
  auto args = parse_args(argc, argv, 1, flags, {}, error);
  if (!args) {
    std::cerr << "nodeflow keys " << sub << ": " << error << "\n" << keys_usage();
    return 2;
  }
  if (sub == "create" || sub == "list") {
    if (!args->positional.empty()) {
      std::cerr << "nodeflow keys " << sub << ": unexpected argument " << args->positional[0]
                << "\n" << keys_usage();
      return 2;
    }
    return sub == "create" ? create(*args) : list(*args);
  }
  if (sub == "revoke")
    return revoke(*args);
  std::cerr << "nodeflow keys: unknown subcommand '" << sub << "'\n" << keys_usage();
  return 2;
}

} // namespace nf::cmd
