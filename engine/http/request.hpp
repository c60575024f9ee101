#pragma once

// The HTTP requests the engine makes (webhooks from the relay, HTTP tasks from the
// system-task runner) and the port they go out through. The engine builds requests and
// reads outcomes; net/http/ performs them. Plain http:// only; https:// is refused with
// a clear error.

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
  /// The egress policy (engine/http/egress.hpp) refused the destination, before any
  /// connection: trying again cannot help, so callers fail for good.
  bool refused = false;
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

/// Where requests go out. Implementations bound every phase by the request's timeouts and
/// never throw: a failure is an outcome with `error` set.
class port {
public:
  virtual ~port() = default;

  /// Performs every request, at most `max_in_flight` at once, on the calling thread;
  /// returns when each one answered, failed or timed out. Entry i answers reqs[i].
  virtual std::vector<outcome> perform_all(const std::vector<request>& reqs,
                                           size_t max_in_flight = 32) = 0;

  /// One request (the same machinery, for callers with a single request).
  outcome perform(const request& req);
};

/// A process that sends no HTTP (a node built without net/http/, a test): every request
/// fails with an outcome saying so, which the relay and the HTTP task report as such.
class unconfigured_port : public port {
public:
  std::vector<outcome> perform_all(const std::vector<request>& reqs, size_t) override;
};

} // namespace nf::http
