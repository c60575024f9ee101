#include "store/pg/link_settings.hpp"

#include <cstdlib>
#include <map>
#include <set>

#include <libpq-fe.h>

#include "store/pg/connection.hpp"

namespace nf::store {

namespace {

link_settings& defaults() {
  static link_settings s;
  return s;
}

// The setting names a startup `options` string sets: `-c name=value`, `-cname=value` or
// `--name=value`, split on unescaped whitespace as the server splits it; the server reads
// a dash in a name as an underscore.
std::set<std::string> named_in_options(const std::string& options) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < options.size(); ++i) {
    char c = options[i];
    if (c == '\\' && i + 1 < options.size()) {
      word.push_back(options[++i]);
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word)
        words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word)
    words.push_back(word);
  std::set<std::string> out;
  auto add = [&](std::string assignment) {
    auto eq = assignment.find('=');
    auto name = assignment.substr(0, eq);
    for (auto& ch : name)
      if (ch == '-')
        ch = '_';
    out.insert(name);
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    if (w == "-c" && i + 1 < words.size())
      add(words[++i]);
    else if (w.rfind("--", 0) == 0)
      add(w.substr(2));
    else if (w.rfind("-c", 0) == 0)
      add(w.substr(2));
  }
  return out;
}

} // namespace

void set_link_defaults(const link_settings& s) {
  defaults() = s;
}

const link_settings& link_defaults() {
  return defaults();
}

caf::expected<void> without_statement_timeout(connection& conn) {
  if (auto r = conn.exec("SET statement_timeout = 0"); !r)
    return std::move(r.error());
  return {};
}

caf::expected<void> plan_each_execution(connection& conn) {
  if (auto r = conn.exec("SET plan_cache_mode = force_custom_plan"); !r)
    return std::move(r.error());
  return {};
}

std::vector<conn_key> link_keys(const std::string& dsn, const link_settings& s) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
  if (err)
    PQfreemem(err);
  if (opts == nullptr)
    return {};
  std::map<std::string, std::string> given;
  for (auto* o = opts; o->keyword; ++o)
    if (o->val)
      given[o->keyword] = o->val;
  PQconninfoFree(opts);
  // An environment variable libpq reads counts as the user's word, as the DSN does.
  if (const char* env = std::getenv("PGCONNECT_TIMEOUT"); env && !given.count("connect_timeout"))
    given["connect_timeout"] = env;
  if (const char* env = std::getenv("PGOPTIONS"); env && !given.count("options"))
    given["options"] = env;

  std::vector<conn_key> out;
  auto key = [&](const char* name, int64_t value) {
    if (value > 0 && !given.count(name))
      out.push_back({name, std::to_string(value)});
  };
  key("connect_timeout", s.connect_timeout_s);
  key("keepalives", 1);
  key("keepalives_idle", s.keepalives_idle_s);
  key("keepalives_interval", s.keepalives_interval_s);
  key("keepalives_count", s.keepalives_count);
  key("tcp_user_timeout", s.tcp_user_timeout_ms);

  std::string theirs = given.count("options") ? given["options"] : "";
  auto named = named_in_options(theirs);
  std::string options;
  auto setting = [&](const char* name, int64_t value) {
    if (value > 0 && !named.count(name))
      options += std::string{options.empty() ? "" : " "} + "-c " + name + "="
                 + std::to_string(value);
  };
  setting("statement_timeout", s.statement_timeout_ms);
  setting("lock_timeout", s.lock_timeout_ms);
  setting("idle_in_transaction_session_timeout", s.idle_in_transaction_timeout_ms);
  if (!options.empty())
    out.push_back({"options", theirs.empty() ? options : options + " " + theirs});
  return out;
}

} // namespace nf::store
