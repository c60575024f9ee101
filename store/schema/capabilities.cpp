#include "store/schema/capabilities.hpp"

#include <chrono>

#include "proto/errors.hpp"
#include "store/db_clock.hpp"

namespace nf::store {

namespace {

constexpr statement server_settings{
  "capabilities.server",
  "SELECT current_setting('server_version_num')::int AS version_num,"
  " current_setting('server_version') AS version, current_setting('io_method', true) AS io_method"};

// It also reads Postgres's clock, the node's first measure of its offset before
// membership's heartbeats keep it (store/db_clock.hpp).
constexpr statement prove_uuidv7{
  "capabilities.uuidv7",
  "SELECT uuidv7()::text AS id,"
  " (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS server_us"};

} // namespace

caf::expected<server_info> check_capabilities(connection& conn) {
  auto r = conn.run1(server_settings);
  if (!r)
    return std::move(r.error());
  server_info info;
  info.version_num = r->i32(0, r->column_named("version_num"));
  info.version = r->str(0, r->column_named("version"));
  info.io_method = r->opt_str(0, r->column_named("io_method")).value_or("");
  if (info.version_num < 180000)
    return make_error(errc::unsupported,
                      "nodeflow needs PostgreSQL 18 or newer (server_version_num >= 180000), "
                      "but the server runs "
                        + info.version + " (server_version_num " + std::to_string(info.version_num)
                        + ")");
  auto sent = std::chrono::system_clock::now();
  auto u = conn.run1(prove_uuidv7);
  if (!u)
    return make_error(errc::unsupported,
                      "the server reports PostgreSQL " + info.version
                        + " but SELECT uuidv7() failed: " + message_of(u.error()));
  observe_db_clock(sent, u->i64(0, u->column_named("server_us")), std::chrono::system_clock::now());
  return info;
}

} // namespace nf::store
