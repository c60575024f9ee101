#pragma once

// An HTTP/1.1 client for tests (Boost.Beast, blocking, one kept-alive connection that
// reconnects when the server closed it): what a user's `curl` does, from C++. Plain HTTP,
// or HTTPS trusting exactly the certificate a test made for its node.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

namespace nf::test {

struct http_reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers; ///< lower-case names
  std::string body;
  /// The body as JSON (null when it is not JSON).
  boost::json::value json() const;
  std::string header(const std::string& lower_name) const;
};

/// HTTPS instead of HTTP: the server must present this certificate (PEM, self-signed, its
/// subject alternative names covering the host connected to) or the connection fails.
struct tls_trust {
  std::string certificate_pem;
};

class http_client {
public:
  http_client(std::string host, uint16_t port,
              std::chrono::milliseconds timeout = std::chrono::seconds(30),
              std::optional<tls_trust> tls = std::nullopt);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  using header_list = std::vector<std::pair<std::string, std::string>>;

  /// `method` as text ("GET", "POST", …); a body is sent with `content_type`.
  http_reply request(const std::string& method, const std::string& target,
                     const std::string& body = {},
                     const std::string& content_type = "application/json",
                     const header_list& headers = {});
  http_reply get(const std::string& target) { return request("GET", target); }
  http_reply post(const std::string& target, const std::string& body) {
    return request("POST", target, body);
  }
  http_reply put(const std::string& target, const std::string& body) {
    return request("PUT", target, body);
  }
  http_reply del(const std::string& target) { return request("DELETE", target); }

  /// Sends raw bytes and reads one answer (malformed requests, pipelining).
  http_reply raw(const std::string& bytes);

private:
  struct impl;
  impl* impl_;
};

/// One Server-Sent Events stream: GET `target` with `headers`, then events as they come.
class sse_reader {
public:
  struct event {
    std::string id;
    std::string type; ///< "message" when the stream names none
    std::string data;
  };
  sse_reader(const std::string& host, uint16_t port, const std::string& target,
             const http_client::header_list& headers = {},
             std::optional<tls_trust> tls = std::nullopt);
  ~sse_reader();
  sse_reader(const sse_reader&) = delete;
  sse_reader& operator=(const sse_reader&) = delete;

  /// The status and headers of the stream's answer.
  const http_reply& head() const { return head_; }
  /// The next event within `timeout`; nullopt when the time is up or the stream ended.
  std::optional<event> next(std::chrono::milliseconds timeout);
  /// Blocks of comments only (keep-alives) read so far; next() skips them.
  size_t comments() const;
  /// True once the server ended the stream.
  bool ended() const { return ended_; }
  /// Cuts the connection (a client going away).
  void close();

private:
  struct impl;
  impl* impl_;
  http_reply head_;
  bool ended_ = false;
};

} // namespace nf::test
