// `nodeflow users`: people who sign in to the HTTP door (POST /api/login), made, listed,
// disabled and given a new password straight in the database (like `keys`), so the first
// admin needs no running node. A password is read from stdin, never from the arguments
// (which other users of the machine can see), and only its argon2id hash is stored.

#include "cmd/users_command.hpp"

#include <iostream>
#include <optional>
#include <string>

#include "cmd/cli_args.hpp"
#include "cmd/cli_audit.hpp"
#include "engine/auth/passwords.hpp"
#include "proto/errors.hpp"
#include "store/users.hpp"

namespace nf::cmd {

namespace {

const char* users_usage() {
  return "usage: nodeflow users create NAME --dsn DSN --role admin|operator|worker|reader "
         "[--namespace NAME]   (password on stdin)\n"
         "       nodeflow users list --dsn DSN\n"
         "       nodeflow users disable NAME --dsn DSN\n"
         "       nodeflow users passwd NAME --dsn DSN   (new password on stdin)\n"
         "A password is one line of stdin, at least 12 characters.\n";
}

int fail(const std::string& sub, const std::string& message, int code = 1) {
  std::cerr << "nodeflow users " << sub << ": " << message << "\n";
  return code;
}

std::optional<store::connection> connect(const std::string& sub, const cli_args& args) {
  auto dsn = resolve_dsn(args);
  if (dsn.empty()) {
    fail(sub, "no database: pass --dsn DSN or set NODEFLOW_DSN");
    return std::nullopt;
  }
  auto conn = store::connection::open(dsn);
  if (!conn) {
    fail(sub, message_of(conn.error()));
    return std::nullopt;
  }
  return std::move(*conn);
}

// The first line of stdin, its line ending dropped; the reason when it is refused.
std::optional<std::string> read_password(std::string& problem) {
  std::string line;
  std::getline(std::cin, line);
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  if (auto p = engine::auth::password_problem(line)) {
    problem = *p + " (the password is one line of stdin)";
    engine::auth::wipe_password(line);
    return std::nullopt;
  }
  return line;
}

// The password's hash, the password itself wiped; nullopt (said on stderr) when refused.
std::optional<std::string> password_hash(const std::string& sub) {
  std::string problem;
  auto password = read_password(problem);
  if (!password) {
    fail(sub, problem, 2);
    return std::nullopt;
  }
  std::optional<std::string> hash;
  try {
    hash = engine::auth::hash_password(*password);
  } catch (const std::exception& e) {
    fail(sub, e.what());
  }
  engine::auth::wipe_password(*password);
  return hash;
}

int create(const cli_args& args) {
  const std::string& name = args.positional[0];
  if (auto p = engine::auth::user_name_problem(name))
    return fail("create", *p, 2);
  auto role = args.value("role");
  if (!role) {
    std::cerr << "nodeflow users create: --role is required (admin, operator, worker, reader)\n"
              << users_usage();
    return 2;
  }
  store::new_user u;
  u.name = name;
  u.role = *role;
  u.namespace_name = args.value("namespace").value_or("default");
  auto hash = password_hash("create");
  if (!hash)
    return 2;
  u.password_hash = std::move(*hash);
  auto conn = connect("create", args);
  if (!conn)
    return 1;
  auto id = store::audited(
    *conn, [&](store::connection& c) { return store::insert_user(c, u); },
    [&](const std::string&) {
      return cli_audit_event("users.create", "user:" + u.name,
                             {{"role", u.role}, {"namespace", u.namespace_name}});
    });
  if (!id)
    return fail("create", message_of(id.error()));
  std::cout << "created user " << u.name << " id=" << *id << " role=" << u.role
            << " namespace=" << u.namespace_name << std::endl;
  return 0;
}

int list(const cli_args& args) {
  auto conn = connect("list", args);
  if (!conn)
    return 1;
  auto users = store::list_users(*conn);
  if (!users)
    return fail("list", message_of(users.error()));
  std::cout << "name role namespace created disabled id\n";
  for (const auto& u : *users)
    std::cout << u.name << " " << u.role << " " << u.namespace_name << " " << u.created_at << " "
              << u.disabled_at.value_or("-") << " " << u.id << "\n";
  return 0;
}

int disable(const cli_args& args) {
  auto conn = connect("disable", args);
  if (!conn)
    return 1;
  const auto& name = args.positional[0];
  if (auto ok = store::audited(
        *conn, [&](store::connection& c) { return store::disable_user(c, name); },
        [&] { return cli_audit_event("users.disable", "user:" + name); });
      !ok)
    return fail("disable", message_of(ok.error()));
  std::cout << "disabled user " << args.positional[0] << "\n";
  return 0;
}

int passwd(const cli_args& args) {
  auto hash = password_hash("passwd");
  if (!hash)
    return 2;
  auto conn = connect("passwd", args);
  if (!conn)
    return 1;
  const auto& name = args.positional[0];
  if (auto ok = store::audited(
        *conn, [&](store::connection& c) { return store::set_user_password(c, name, *hash); },
        [&] { return cli_audit_event("users.passwd", "user:" + name); });
      !ok)
    return fail("passwd", message_of(ok.error()));
  std::cout << "new password for user " << args.positional[0] << "\n";
  return 0;
}

} // namespace

int run_users_command(int argc, char** argv) {
  if (argc < 1) {
    std::cerr << users_usage();
    return 2;
  }
  std::string sub = argv[0];
  if (sub != "create" && sub != "list" && sub != "disable" && sub != "passwd") {
    std::cerr << "nodeflow users: unknown subcommand '" << sub << "'\n" << users_usage();
    return 2;
  }
  std::string error;
  std::vector<std::string> flags{"dsn"};
  if (sub == "create")
    flags.insert(flags.end(), {"role", "namespace"});
  auto args = parse_args(argc, argv, 1, flags, {}, error);
  if (!args) {
    std::cerr << "nodeflow users " << sub << ": " << error << "\n" << users_usage();
    return 2;
  }
  size_t names = sub == "list" ? 0 : 1;
  if (args->positional.size() != names) {
    std::cerr << "nodeflow users " << sub << ": "
              << (names ? "name one user" : "unexpected argument " + args->positional[0])
              << "\n" << users_usage();
    return 2;
  }
  if (sub == "create")
    return create(*args);
  if (sub == "list")
    return list(*args);
  if (sub == "disable")
    return disable(*args);
  return passwd(*args);
}

} // namespace nf::cmd
