#pragma once

// A small HTTP/1.1 client over Boost.Beast for the relay (webhooks) and the
// system-task runner (HTTP tasks). Requests run concurrently on an io_context
// the caller's thread drives, so a detached actor delivers a batch in about the
// time of its slowest request, and every phase is bounded by a timeout.
// Plain http:// only; https:// is refused with a clear error.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nf::http {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct request {
  std::string method = "POST";
  std::string url; ///< http://host[:port][/path][?query]
  header_list headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{5000}; ///< resolve + connect
  std::chrono::milliseconds read_timeout{5000};    ///< write the request + read the response
};

struct response {
  int status = 0;
  std::string reason;
  header_list headers;
  std::string body;
};

/// Either a response (any status) or why there is none.
struct outcome {
  std::optional<response> resp;
  std::string error; ///< set when `resp` is absent: "connect 127.0.0.1:9: Connection refused"
};

struct url_parts {
  std::string host;
  std::string port;
  std::string target; ///< path and query, "/" at least
};

/// Splits an http:// URL; nullopt with `error` saying what is wrong otherwise.
std::optional<url_parts> parse_url(const std::string& url, std::string& error);

/// Methods `request::method` may name (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS).
bool known_method(const std::string& method);

/// Performs every request, at most `max_in_flight` at once, on the calling thread;
/// returns when each one answered, failed or timed out. Entry i answers reqs[i].
std::vector<outcome> perform_all(const std::vector<request>& reqs, size_t max_in_flight = 32);

/// One request (the same machinery, for callers with a single request).
outcome perform(const request& req);

} // namespace nf::http
