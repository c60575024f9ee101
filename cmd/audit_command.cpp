#include "cmd/audit_command.hpp"

#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <boost/json.hpp>

#include "cmd/cli_args.hpp"
#include "engine/audit_trail.hpp"
#include "net/web/conductor_shapes.hpp"
#include "proto/errors.hpp"

namespace nf::cmd {

namespace {

namespace json = boost::json;

constexpr const char* usage_line =
  "usage: nodeflow audit [--since MS|YYYY-MM-DD[THH:MM:SS]] [--action A] [--limit N] "
  "[--cursor C] [--json] [--dsn DSN]\n";

int usage(const std::string& why) {
  std::cerr << "nodeflow audit: " << why << "\n" << usage_line;
  return 2;
}

// Milliseconds since the epoch, or a UTC date with an optional time.
std::optional<int64_t> parse_since(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 16)
    return std::stoll(s);
  for (const char* fmt : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"}) {
    std::tm tm{};
    std::istringstream in{s};
    in >> std::get_time(&tm, fmt);
    if (!in.fail() && in.peek() == std::char_traits<char>::eof())
      return static_cast<int64_t>(timegm(&tm)) * 1000;
  }
  return std::nullopt;
}

std::string text_of(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : v.is_null() ? "-" : json::serialize(v);
}

} // namespace

int run_audit_command(int argc, char** argv) {
  std::string error;
  auto args =
    parse_args(argc, argv, 0, {"dsn", "since", "action", "limit", "cursor"}, {"json"}, error);
  if (!args)
    return usage(error);
  if (!args->positional.empty())
    return usage("unexpected argument " + args->positional[0]);
  msg::audit_query q;
  if (auto s = args->value("since")) {
    auto ms = parse_since(*s);
    if (!ms)
      return usage("--since: expected milliseconds since the epoch or YYYY-MM-DD[THH:MM:SS] "
                   "(UTC), got \"" + *s + "\"");
    q.since_ms = *ms;
  }
  if (auto a = args->value("action"))
    q.action = *a;
  if (auto c = args->value("cursor"))
    q.cursor = *c;
  if (auto l = args->value("limit")) {
    char* end = nullptr;
    long n = std::strtol(l->c_str(), &end, 10);
    if (l->empty() || *end != '\0' || n < 1 || n > 1000)
      return usage("--limit: expected an integer 1 … 1000, got \"" + *l + "\"");
    q.limit = static_cast<int32_t>(n);
  }
  auto dsn = resolve_dsn(*args);
  if (dsn.empty()) {
    std::cerr << "nodeflow audit: no database: pass --dsn DSN or set NODEFLOW_DSN\n";
    return 1;
  }
  auto conn = store::connection::open(dsn);
  if (!conn) {
    std::cerr << "nodeflow audit: " << nf::message_of(conn.error()) << "\n";
    return 1;
  }
  auto page = engine::read_audit(*conn, q);
  if (!page) {
    std::cerr << "nodeflow audit: " << nf::message_of(page.error()) << "\n";
    return 1;
  }
  if (args->has("json")) {
    std::cout << *page << "\n";
    return 0;
  }
  auto v = json::parse(*page);
  for (const auto& e : v.as_object().at("events").as_array()) {
    const auto& o = e.as_object();
    std::cout << net::web::iso_utc(o.at("at").to_number<int64_t>()) << "  "
              << text_of(o.at("actor")) << "  "
              << text_of(o.at("origin")) << "  " << text_of(o.at("action")) << "  "
              << text_of(o.at("target")) << "  ns=" << text_of(o.at("namespace")) << "  "
              << json::serialize(o.at("details")) << "\n";
  }
  if (const auto& next = v.as_object().at("nextCursor"); next.is_string())
    std::cout << "next page: --cursor " << next.as_string() << "\n";
  return 0;
}

} // namespace nf::cmd
