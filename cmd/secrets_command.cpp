#include "cmd/secrets_command.hpp"

#include <iostream>
#include <iterator>
#include <string>

#include "cmd/cli_args.hpp"
#include "cmd/cli_audit.hpp"
#include "config/settings.hpp"
#include "engine/secrets/keyring.hpp"
#include "engine/secrets/sealing.hpp"
#include "flow/expression.hpp"
#include "proto/errors.hpp"
#include "store/secrets.hpp"

namespace nf::cmd {

namespace {

const char* usage =
  "usage: nodeflow secrets keygen                       print a new master key (base64)\n"
  "       nodeflow secrets put NAME [options]           seal the value read from stdin\n"
  "       nodeflow secrets list [options]               names, versions and times\n"
  "       nodeflow secrets remove NAME [options]\n"
  "       nodeflow secrets rotate [options]             re-seal every value under the "
  "current key\n"
  "options: --dsn DSN (or NODEFLOW_DSN), --config FILE, --secrets.master_key_file FILE,\n"
  "         --secrets.previous_key_files F1,F2\n"
  "A value is never an argument: put reads it from stdin (one trailing newline dropped).\n";

int fail(const std::string& what) {
  std::cerr << "nodeflow secrets: " << what << "\n";
  return 1;
}

// Every secret is of namespace "default" until the CLI names one.
const namespace_id& ns() {
  return nf::default_namespace;
}

struct context {
  store::connection conn;
  config::values settings;
};

std::optional<context> open(const cli_args& args, int& code) {
  config::values settings = config::values::defaults();
  if (auto file = args.value("config")) {
    auto problems = config::load_file(*file, settings);
    for (const auto& p : problems)
      std::cerr << "nodeflow secrets: " << p << "\n";
    if (!problems.empty()) {
      code = 2;
      return std::nullopt;
    }
  }
  for (const auto* key : {"secrets.master_key_file", "secrets.previous_key_files"})
    if (auto v = args.value(key))
      if (auto problem = settings.set(key, *v, std::string{"--"} + key)) {
        std::cerr << "nodeflow secrets: " << *problem << "\n";
        code = 2;
        return std::nullopt;
      }
  auto dsn = resolve_dsn(args);
  if (dsn.empty())
    dsn = settings.get(config::keys::db_dsn);
  if (dsn.empty()) {
    code = fail("no database: pass --dsn DSN or set NODEFLOW_DSN");
    return std::nullopt;
  }
  auto conn = store::connection::open(dsn);
  if (!conn) {
    code = fail(nf::message_of(conn.error()));
    return std::nullopt;
  }
  return context{std::move(*conn), std::move(settings)};
}

caf::expected<engine::secrets::keyring> ring_of(const context& c) {
  return engine::secrets::keyring::load(
    c.settings.get(config::keys::secrets_master_key_file),
    c.settings.get(config::keys::secrets_previous_key_files));
}

int put(context& c, const std::string& name) {
  auto ring = ring_of(c);
  if (!ring)
    return fail(nf::message_of(ring.error()));
  std::string value{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  if (!value.empty() && value.back() == '\n')
    value.pop_back();
  if (!value.empty() && value.back() == '\r')
    value.pop_back();
  if (value.empty())
    return fail("put " + name + ": expected the value on stdin, got nothing");
  auto sealed = engine::secrets::seal(*ring, ns(), name, value);
  if (!sealed)
    return fail(nf::message_of(sealed.error()));
  auto version = store::audited(
    c.conn, [&](store::connection& conn) { return store::put_secret(conn, *sealed); },
    [&](int32_t v) {
      auto e = cli_audit_event("secrets.put", "secret:" + name, {{"version", v}});
      e.ns = ns();
      return e;
    });
  if (!version)
    return fail(nf::message_of(version.error()));
  std::cout << "secret " << name << " version " << *version << " (key " << sealed->key_id
            << ")\n";
  return 0;
}

int list(context& c) {
  auto rows = store::list_secrets(c.conn, ns());
  if (!rows)
    return fail(nf::message_of(rows.error()));
  for (const auto& r : *rows)
    std::cout << r.name << "  version " << r.version << "  key " << r.key_id << "  updated "
              << r.updated_at << "\n";
  std::cout << rows->size() << " secret(s)\n";
  return 0;
}

int remove(context& c, const std::string& name) {
  auto removed = store::audited(
    c.conn, [&](store::connection& conn) { return store::remove_secret(conn, ns(), name); },
    [&](bool) {
      auto e = cli_audit_event("secrets.remove", "secret:" + name);
      e.ns = ns();
      return e;
    });
  if (!removed)
    return fail(nf::message_of(removed.error()));
  if (!*removed)
    return fail("remove " + name + ": no secret of that name");
  std::cout << "removed " << name << "\n";
  return 0;
}

int rotate(context& c) {
  auto ring = ring_of(c);
  if (!ring)
    return fail(nf::message_of(ring.error()));
  auto old = store::secrets_not_under(c.conn, ring->current().id);
  if (!old)
    return fail(nf::message_of(old.error()));
  size_t done = 0, failed = 0;
  for (const auto& s : *old) {
    auto value = engine::secrets::unseal(*ring, s);
    caf::expected<bool> replaced{false};
    if (value) {
      auto now = engine::secrets::seal(*ring, s.ns, s.name, *value);
      replaced = now ? store::audited(
                         c.conn,
                         [&](store::connection& conn) {
                           return store::reseal_secret(conn, s, *now);
                         },
                         [&](bool) {
                           auto e = cli_audit_event("secrets.rotate", "secret:" + s.name,
                                                    {{"key", now->key_id}});
                           e.ns = s.ns;
                           return e;
                         })
                     : caf::expected<bool>{std::move(now.error())};
    } else {
      replaced = std::move(value.error());
    }
    if (!replaced) {
      ++failed;
      std::cerr << "nodeflow secrets: rotate: " << nf::message_of(replaced.error()) << "\n";
    } else if (*replaced) {
      ++done;
    } // else replaced by a put in between, under the current key already
  }
  std::cout << "re-sealed " << done << " secret(s) under key " << ring->current().id << "\n";
  return failed == 0 ? 0 : 1;
}

} // namespace

int run_secrets_command(int argc, char** argv) {
  std::string error;
  auto args = parse_args(argc, argv, 0,
                         {"dsn", "config", "secrets.master_key_file", "secrets.previous_key_files"},
                         {}, error);
  if (!args || args->positional.empty()) {
    std::cerr << (args ? "" : "nodeflow secrets: " + error + "\n") << usage;
    return 2;
  }
  const auto& verb = args->positional[0];
  if (verb == "keygen" && args->positional.size() == 1) {
    auto key = engine::secrets::generate_key_text();
    if (key.empty())
      return fail("libsodium failed to initialise");
    std::cout << key;
    return 0;
  }
  bool named = verb == "put" || verb == "remove";
  bool bare = verb == "list" || verb == "rotate";
  if (!(named && args->positional.size() == 2) && !(bare && args->positional.size() == 1)) {
    std::cerr << usage;
    return 2;
  }
  if (named && !flow::valid_secret_name(args->positional[1])) {
    std::cerr << "nodeflow secrets: NAME: expected 1-128 of A-Z a-z 0-9 _ - (not starting "
                 "with -), got \""
              << args->positional[1] << "\"\n";
    return 2;
  }
  int code = 0;
  auto c = open(*args, code);
  if (!c)
    return code;
  if (verb == "put")
    return put(*c, args->positional[1]);
  if (verb == "remove")
    return remove(*c, args->positional[1]);
  if (verb == "list")
    return list(*c);
  return rotate(*c);
}

} // namespace nf::cmd
