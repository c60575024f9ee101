#define CAF_SUITE engine.http_task
#include "caf/test/unit_test.hpp"

#include <boost/json/parse.hpp>

#include "engine/system_tasks/http_task.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

/// The problem read_http_task reports for `input` ("" when it accepts it).
std::string problem(const std::string& input) {
  auto r = engine::read_http_task(input, 1000ms);
  return r.index() == 1 ? std::get<1>(r) : "";
}

http::url_parts url(const std::string& text) {
  std::string error;
  auto u = http::parse_url(text, error);
  if (!u)
    CAF_FAIL("rejected " << text << ": " << error);
  return *u;
}

std::string url_error(const std::string& text) {
  std::string error;
  if (http::parse_url(text, error))
    CAF_FAIL("accepted " << text);
  return error;
}

} // namespace

CAF_TEST(urls split into host port and target) {
  auto u = url("http://example.com:8080/a/b?c=1#frag");
  CAF_CHECK_EQUAL(u.host, "example.com");
  CAF_CHECK_EQUAL(u.port, "8080");
  CAF_CHECK_EQUAL(u.target, "/a/b?c=1");
  CAF_CHECK_EQUAL(url("HTTP://h").target, "/");
  CAF_CHECK_EQUAL(url("http://h?q").target, "/?q");
  CAF_CHECK_EQUAL(url("http://[::1]:9/x").host, "::1");
  CAF_CHECK_EQUAL(url("http://[::1]/x").port, "80");
  CAF_CHECK_EQUAL(url_error("ftp://h/"), "expected an absolute http:// URL, got \"ftp://h/\"");
  CAF_CHECK_EQUAL(url_error("http://h:99999/"), "expected http://host[:port][/path], got \"http://h:99999/\"");
  CAF_CHECK_EQUAL(url_error("http://:80/"), "expected http://host[:port][/path], got \"http://:80/\"");
  CAF_CHECK_EQUAL(url_error("http://u:p@h/"), "credentials in the URL are not supported, got \"http://u:p@h/\"");
}

CAF_TEST(the http_request input becomes a request) {
  auto r = engine::read_http_task(R"({"http_request": {"uri": "http://h/x", "method": "put",
    "headers": {"A": "1", "B": true}, "body": "raw text", "contentType": "text/plain",
    "accept": "text/html", "connectionTimeOut": 250, "readTimeOut": 600000}})",
                                  1000ms);
  CAF_REQUIRE_EQUAL(r.index(), 0u);
  const auto& req = std::get<0>(r);
  CAF_CHECK_EQUAL(req.method, "PUT");
  CAF_CHECK_EQUAL(req.body, "raw text"); // a string body is sent as is
  CAF_CHECK(req.headers
            == http::header_list({{"Accept", "text/html"}, {"A", "1"}, {"B", "true"},
                                  {"Content-Type", "text/plain"}}));
  CAF_CHECK_EQUAL(req.connect_timeout.count(), 250);
  CAF_CHECK_EQUAL(req.read_timeout.count(), 600000);
  auto plain = engine::read_http_task(R"({"uri": "http://h/", "body": {"a": 1}})", 1000ms);
  CAF_REQUIRE_EQUAL(plain.index(), 0u);
  CAF_CHECK_EQUAL(std::get<0>(plain).method, "GET");
  CAF_CHECK_EQUAL(std::get<0>(plain).body, R"({"a":1})");
  CAF_CHECK_EQUAL(std::get<0>(plain).read_timeout.count(), 1000); // the default
}

CAF_TEST(a request ends before the lease of its task) {
  http::request r;
  r.connect_timeout = 5000ms;
  r.read_timeout = 60000ms;
  engine::fit_into_lease(r, 100000, 80000, 2000ms); // 18 s left
  CAF_CHECK_EQUAL(r.connect_timeout.count(), 5000);
  CAF_CHECK_EQUAL(r.read_timeout.count(), 13000);
  engine::fit_into_lease(r, 100000, 99000, 2000ms); // nothing left: the least there is
  CAF_CHECK_EQUAL(r.connect_timeout.count(), 1);
  CAF_CHECK_EQUAL(r.read_timeout.count(), 1);
  http::request roomy;
  engine::fit_into_lease(roomy, 1000000, 0, 2000ms); // a long lease changes nothing
  CAF_CHECK_EQUAL(roomy.connect_timeout.count(), 5000);
  CAF_CHECK_EQUAL(roomy.read_timeout.count(), 5000);
}

CAF_TEST(bad input names the field and what was expected) {
  CAF_CHECK_EQUAL(problem("[1]"), "input: expected an object, got an array");
  CAF_CHECK_EQUAL(problem("{}"), "http_request: expected an object with at least \"uri\", got nothing");
  CAF_CHECK_EQUAL(problem(R"({"http_request": "http://h"})"), "http_request: expected an object, got a string");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": 5}})"), "http_request.uri: expected a string, got a number");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": "http://h", "headers": [1]}})"),
                  "http_request.headers: expected an object, got an array");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": "http://h", "headers": {"X": {}}}})"),
                  "http_request.headers.X: expected a string, number or boolean, got an object");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": "http://h", "headers": {"X": "a\r\nB: c"}}})"),
                  "http_request.headers.X: header names and values must not contain line breaks "
                  "(or ':' in the name)");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": "http://h", "connectionTimeOut": -3}})"),
                  "http_request.connectionTimeOut: expected an integer 1 … 600000 (milliseconds), got -3");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": "http://h", "readTimeOut": "5"}})"),
                  "http_request.readTimeOut: expected an integer 1 … 600000 (milliseconds), got \"5\"");
  CAF_CHECK_EQUAL(problem(R"({"http_request": {"uri": "http://h", "accept": 1}})"),
                  "http_request.accept: expected a string, got a number");
  CAF_CHECK(problem("{").find("input: expected JSON") == 0);
}

CAF_TEST(the response becomes the task result) {
  msg::leased_task task;
  task.task_id = "t";
  task.workflow_id = "w";
  task.lease_token = "k";
  http::outcome ok;
  ok.resp = http::response{200, "OK", {{"Content-Type", "application/json"}, {"Set-Cookie", "a"},
                                       {"Set-Cookie", "b"}}, R"({"n": 1})"};
  auto r = engine::http_task_result(task, ok);
  CAF_CHECK_EQUAL(r.status, "COMPLETED");
  CAF_CHECK_EQUAL(r.lease_token, "k");
  CAF_CHECK(boost::json::parse(r.output_json)
            == boost::json::parse(R"({"response": {"statusCode": 200, "reasonPhrase": "OK",
                 "headers": {"Content-Type": "application/json", "Set-Cookie": "a, b"},
                 "body": {"n": 1}}})"));
  http::outcome bad_json = ok;
  bad_json.resp->status = 500;
  bad_json.resp->reason = "Internal Server Error";
  bad_json.resp->body = "{oops";
  auto f = engine::http_task_result(task, bad_json);
  CAF_CHECK_EQUAL(f.status, "FAILED");
  CAF_CHECK_EQUAL(f.reason, "HTTP 500 Internal Server Error");
  auto body = boost::json::parse(f.output_json).as_object().at("response").as_object().at("body");
  CAF_CHECK(body.is_string() && body.as_string() == "{oops"); // not JSON after all: text
  http::outcome down;
  down.error = "connect h:80: Connection refused";
  auto d = engine::http_task_result(task, down);
  CAF_CHECK_EQUAL(d.status, "FAILED");
  CAF_CHECK_EQUAL(d.reason, "connect h:80: Connection refused");
  // A refused destination stays refused: no retry.
  http::outcome refused;
  refused.error = "refused by egress.deny: 169.254.169.254 is in 169.254.0.0/16";
  refused.refused = true;
  auto e = engine::http_task_result(task, refused);
  CAF_CHECK_EQUAL(e.status, "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(e.reason, refused.error);
  auto t = engine::http_task_rejected(task, "http_request.uri: expected a string, got nothing");
  CAF_CHECK_EQUAL(t.status, "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(t.reason, "invalid HTTP task input: http_request.uri: expected a string, got nothing");
}
