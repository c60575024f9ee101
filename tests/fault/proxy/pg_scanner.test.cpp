#define CAF_SUITE fault.proxy
#include "caf/test/unit_test.hpp"

#include <cstdint>
#include <vector>

#include "tests/fault/proxy/pg_scanner.hpp"

using nf::fault::pg_scanner;

namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string frame(char type, const std::string& body) {
  return std::string{type} + be32(static_cast<std::uint32_t>(body.size() + 4)) + body;
}

std::string startup() {
  std::string body = be32(196608) + std::string{"user\0nf\0\0", 9};
  return be32(static_cast<std::uint32_t>(body.size() + 4)) + body;
}

std::string query(const std::string& sql) {
  return frame('Q', sql + '\0');
}

// What libpq's PQsendQueryParams puts on the wire: Parse, Bind, Describe, Execute.
std::string extended(const std::string& sql) {
  return frame('P', std::string{"\0", 1} + sql + std::string{"\0\0\0", 3})
         + frame('B', std::string(8, '\0')) + frame('D', "P\0") + frame('E', std::string(5, '\0'));
}

// The offsets just past each commit, feeding `stream` in pieces of `step` bytes.
std::vector<std::size_t> commits(const std::string& stream, std::size_t step) {
  pg_scanner s;
  std::vector<std::size_t> ends;
  for (std::size_t at = 0; at < stream.size(); at += step)
    s.feed(std::string_view{stream}.substr(at, step), [&](std::size_t end) {
      ends.push_back(at + end);
      return true;
    });
  return ends;
}

} // namespace

CAF_TEST(commit sql is COMMIT or END after whitespace and comments) {
  CAF_CHECK(pg_scanner::is_commit_sql("COMMIT"));
  CAF_CHECK(pg_scanner::is_commit_sql("  commit;"));
  CAF_CHECK(pg_scanner::is_commit_sql("-- done\n/* a /* nested */ b */ End Transaction"));
  CAF_CHECK(pg_scanner::is_commit_sql("commit and chain"));
  CAF_CHECK(!pg_scanner::is_commit_sql("COMMITTED"));
  CAF_CHECK(!pg_scanner::is_commit_sql("ending"));
  CAF_CHECK(!pg_scanner::is_commit_sql("SELECT 'COMMIT'"));
  CAF_CHECK(!pg_scanner::is_commit_sql("-- COMMIT"));
  CAF_CHECK(!pg_scanner::is_commit_sql("BEGIN"));
}

CAF_TEST(commits are found however the stream is split) {
  auto head = startup() + query("BEGIN") + query("INSERT INTO t VALUES (1)");
  auto simple = head + query("COMMIT");
  // A pipeline: BEGIN, a statement and COMMIT in the extended protocol, then Sync.
  auto pipelined = startup() + extended("BEGIN") + extended("INSERT INTO t VALUES (1)")
                   + extended("COMMIT");
  auto sync = frame('S', "");
  for (std::size_t step : {1u, 3u, 7u, 100000u}) {
    CAF_CHECK_EQUAL(commits(simple, step), std::vector<std::size_t>{simple.size()});
    CAF_CHECK_EQUAL(commits(pipelined + sync, step), std::vector<std::size_t>{pipelined.size()});
    CAF_CHECK_EQUAL(commits(head + query("ROLLBACK"), step), std::vector<std::size_t>{});
  }
  // An SSLRequest before the startup packet (answered 'N') is skipped too.
  auto ssl = be32(8) + be32(80877103) + simple;
  CAF_CHECK_EQUAL(commits(ssl, 2), std::vector<std::size_t>{ssl.size()});
  // Two commits in one read are two commits.
  auto twice = simple + query("BEGIN") + query("END");
  CAF_CHECK_EQUAL(commits(twice, 100000), (std::vector<std::size_t>{simple.size(), twice.size()}));
}

CAF_TEST(the scanner stops where the caller cuts) {
  auto stream = startup() + query("COMMIT") + query("COMMIT");
  pg_scanner s;
  int seen = 0;
  s.feed(stream, [&](std::size_t) {
    ++seen;
    return false;
  });
  CAF_CHECK_EQUAL(seen, 1);
}
