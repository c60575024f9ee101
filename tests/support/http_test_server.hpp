#pragma once

// A small HTTP server on 127.0.0.1 for the relay and HTTP-task suites (Beast, one
// thread). It records every request and answers what the test's handler says, so a
// test can fail a share of requests, every request, or none.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nf::test {

struct seen_request {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (k == name)
        return v;
    return "";
  }
};

struct canned_reply {
  int status = 200;
  std::string body = "{}";
  std::string content_type = "application/json";
  int delay_ms = 0; ///< answer this much later (without holding up other requests)
};

class http_test_server {
public:
  /// `n` counts requests from 0, in arrival order.
  using handler = std::function<canned_reply(const seen_request&, size_t n)>;

  http_test_server();
  ~http_test_server();
  http_test_server(const http_test_server&) = delete;
  http_test_server& operator=(const http_test_server&) = delete;

  unsigned short port() const;
  std::string url(const std::string& path = "/hook") const;

  void on_request(handler h);
  std::vector<seen_request> requests() const;

private:
  // Beast lives in the .cpp alone: its templates cost each including unit ~25 s to compile.
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace nf::test
