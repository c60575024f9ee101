#include "cmd/sinks_command.hpp"

#include <iostream>
#include <iterator>
#include <string>

#include <boost/json.hpp>

#include "cmd/cli_args.hpp"
#include "cmd/cli_audit.hpp"
#include "engine/webhook_sinks.hpp"
#include "proto/errors.hpp"
#include "store/namespaces.hpp"

namespace nf::cmd {

namespace {

namespace json = boost::json;

const char* usage =
  "usage: nodeflow sinks add URL [options] [--event-types T1,T2] [--max-attempts N]\n"
  "                              [--timeout-ms N] [--disabled] [--signing-secret-stdin]\n"
  "                              [--allow-plain-http]\n"
  "       nodeflow sinks list [options]\n"
  "       nodeflow sinks show|enable|disable|remove ID [options]\n"
  "options: --dsn DSN (or NODEFLOW_DSN), --namespace NAME (default \"default\")\n"
  "A signing secret is never an argument: --signing-secret-stdin reads it from stdin (one\n"
  "trailing newline dropped). add, show, enable and disable print the sink as JSON; its\n"
  "secret is never printed (signingSecretSet says whether it has one). A plain http:// URL\n"
  "to a host other than loopback is refused, as the nodes' relay refuses to deliver there,\n"
  "unless --allow-plain-http says they run with relay.allow_plain_http.\n";

int fail(const std::string& what) {
  std::cerr << "nodeflow sinks: " << what << "\n";
  return 1;
}

// A comma-separated list, as the API's array; empty parts are refused there by name.
json::array split(const std::string& text) {
  json::array out;
  size_t at = 0;
  while (true) {
    auto comma = text.find(',', at);
    auto part = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    auto b = part.find_first_not_of(' ');
    auto e = part.find_last_not_of(' ');
    out.emplace_back(b == std::string::npos ? std::string{} : part.substr(b, e - b + 1));
    if (comma == std::string::npos)
      return out;
    at = comma + 1;
  }
}

// The number as the API gets it: a flag that is not one is refused here, naming the flag.
std::optional<int64_t> number(const cli_args& args, const char* flag) {
  auto v = args.value(flag);
  size_t used = 0;
  try {
    auto n = std::stoll(*v, &used);
    if (used == v->size())
      return n;
  } catch (...) {
  }
  std::cerr << "nodeflow sinks: --" << flag << ": expected a whole number, got \"" << *v
            << "\"\n";
  return std::nullopt;
}

int show_line(const json::object& s) {
  // As text: a json::string written to a stream is written as JSON, in quotes.
  auto text = [](const json::value& v) { return std::string_view{v.as_string()}; };
  std::cout << text(s.at("id")) << "  " << text(s.at("url")) << "  "
            << (s.at("enabled").as_bool() ? "enabled" : "disabled") << "  types=";
  const auto& types = s.at("eventTypes");
  if (types.is_null()) {
    std::cout << "all";
  } else {
    bool first = true;
    for (const auto& t : types.as_array()) {
      std::cout << (first ? "" : ",") << text(t);
      first = false;
    }
  }
  std::cout << "  maxAttempts=" << s.at("maxAttempts").as_int64()
            << "  timeoutMs=" << s.at("timeoutMs").as_int64()
            << "  signed=" << (s.at("signingSecretSet").as_bool() ? "yes" : "no") << "\n";
  return 0;
}

} // namespace

int run_sinks_command(int argc, char** argv) {
  std::string error;
  auto args = parse_args(argc, argv, 0,
                         {"dsn", "namespace", "event-types", "max-attempts", "timeout-ms"},
                         {"disabled", "signing-secret-stdin", "allow-plain-http"}, error);
  if (!args || args->positional.empty()) {
    std::cerr << (args ? "" : "nodeflow sinks: " + error + "\n") << usage;
    return 2;
  }
  const auto& verb = args->positional[0];
  bool by_id = verb == "show" || verb == "enable" || verb == "disable" || verb == "remove";
  bool ok = (verb == "add" && args->positional.size() == 2)
            || (verb == "list" && args->positional.size() == 1)
            || (by_id && args->positional.size() == 2);
  if (!ok) {
    std::cerr << usage;
    return 2;
  }
  if (verb != "add")
    for (const auto* only_add :
         {"event-types", "max-attempts", "timeout-ms", "disabled", "signing-secret-stdin"})
      if (args->has(only_add)) {
        std::cerr << "nodeflow sinks: --" << only_add << " is an option of add only\n";
        return 2;
      }

  msg::sink_request r;
  auto audit = cli_audit_event("", "");
  r.actor = audit.actor;
  r.origin = audit.origin;
  if (verb == "add") {
    r.op = "create";
    json::object body{{"url", args->positional[1]}};
    if (auto types = args->value("event-types"))
      body["eventTypes"] = split(*types);
    for (auto [flag, field] : {std::pair{"max-attempts", "maxAttempts"},
                               std::pair{"timeout-ms", "timeoutMs"}})
      if (args->has(flag)) {
        auto n = number(*args, flag);
        if (!n)
          return 2;
        body[field] = *n;
      }
    if (args->has("disabled"))
      body["enabled"] = false;
    if (args->has("signing-secret-stdin")) {
      std::string secret{std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>()};
      if (!secret.empty() && secret.back() == '\n')
        secret.pop_back();
      if (!secret.empty() && secret.back() == '\r')
        secret.pop_back();
      body["signingSecret"] = secret;
    }
    r.body_json = json::serialize(body);
  } else if (verb == "list") {
    r.op = "list";
  } else {
    r.id = args->positional[1];
    if (verb == "show")
      r.op = "get";
    else if (verb == "remove")
      r.op = "remove";
    else {
      r.op = "update";
      r.body_json = json::serialize(json::object{{"enabled", verb == "enable"}});
    }
  }

  auto dsn = resolve_dsn(*args);
  if (dsn.empty())
    return fail("no database: pass --dsn DSN or set NODEFLOW_DSN");
  auto conn = store::connection::open(dsn);
  if (!conn)
    return fail(nf::message_of(conn.error()));
  auto ns = store::find_namespace(*conn, args->value("namespace").value_or("default"));
  if (!ns)
    return fail(nf::message_of(ns.error()));
  r.namespace_id = ns->id.str();
  auto answer = engine::webhook_sinks(*conn, r, args->has("allow-plain-http"));
  if (!answer)
    return fail(verb + ": " + nf::message_of(answer.error()));
  if (verb == "remove") {
    std::cout << "removed " << r.id << "\n";
    return 0;
  }
  auto v = json::parse(*answer);
  if (verb == "list") {
    const auto& sinks = v.at("sinks").as_array();
    for (const auto& s : sinks)
      show_line(s.as_object());
    std::cout << sinks.size() << " sink(s)\n";
    return 0;
  }
  std::cout << *answer << "\n";
  return 0;
}

} // namespace nf::cmd
