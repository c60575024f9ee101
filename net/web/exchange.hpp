#pragma once

// One HTTP request in flight and the way back to its client. A route's handler gets a
// shared exchange and answers it once, from any thread: the answer is posted to the
// connection's strand, so handlers may answer from a CAF callback. A handler may instead
// open a stream (Server-Sent Events) and write to it until it ends or the client goes.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/http/verb.hpp>
#include <boost/json/value.hpp>
#include <caf/error.hpp>

namespace nf::net::web {

using verb = boost::beast::http::verb;
using header_list = std::vector<std::pair<std::string, std::string>>;

struct response {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  header_list headers;
};

/// What the connection does for an exchange (server.cpp implements it); tests may fake it.
class connection_port {
public:
  virtual ~connection_port() = default;
  virtual void send(response r) = 0;
  virtual void open_stream(std::string content_type, header_list headers) = 0;
  virtual void stream_chunk(std::string data) = 0;
  virtual void end_stream() = 0;
  /// Whether the client has closed its side of the connection (or it failed) while its
  /// request is being handled: a non-blocking peek at the socket, callable from any thread.
  virtual bool peer_closed() const { return false; }
};

/// Who sends a request, as the door established it (never what the client claims): the
/// subject audit rows name, the role routes check and the namespace every request is
/// confined to. Without authentication (`auth` off) every request is the admin of the
/// default namespace.
struct principal {
  std::string subject = "anonymous"; ///< "key:<keyId>", "user:<name>" or "anonymous"
  std::string role = "admin";        ///< admin, operator, worker or reader
  std::string namespace_name = "default";
};

class exchange : public std::enable_shared_from_this<exchange> {
public:
  exchange(verb method, std::string target, std::map<std::string, std::string> headers,
           std::string body, std::shared_ptr<connection_port> conn);

  verb method() const { return method_; }
  /// The path without its query, percent-decoded.
  const std::string& path() const { return path_; }
  const std::string& body() const { return body_; }
  /// A request header (lower-case name), "" when absent.
  std::string header(std::string_view lower_name) const;
  /// A query parameter, percent-decoded; nullptr when absent.
  const std::string* query(std::string_view name) const;
  const std::map<std::string, std::string>& queries() const { return query_; }
  /// Every query parameter as given, in order (repeats included).
  const std::vector<std::pair<std::string, std::string>>& query_list() const {
    return query_all_;
  }
  /// Every value of a repeated query parameter (`?taskType=a&taskType=b`), in order.
  std::vector<std::string> query_all(std::string_view name) const;
  /// A `{name}` segment of the matched route's pattern.
  const std::string& param(std::string_view name) const;
  void set_params(std::map<std::string, std::string> p) { params_ = std::move(p); }
  /// The matched route's pattern ("/api/workflow/{workflowId}"), for metrics.
  const std::string& route() const { return route_; }
  void set_route(std::string r) { route_ = std::move(r); }
  /// Who sends it (set by the server before the handler runs).
  const principal& who() const { return who_; }
  void set_principal(principal p) { who_ = std::move(p); }
  /// The client's address ("127.0.0.1:53122"), for audit rows and logs.
  const std::string& remote() const { return remote_; }
  void set_remote(std::string r) { remote_ = std::move(r); }

  /// Answers once; later answers are ignored.
  void respond(response r);
  void respond_json(unsigned status, const boost::json::value& v);
  void respond_text(unsigned status, std::string text);
  /// Conductor's error shape: `{"status","message","code","retryable","validationErrors":
  /// [{"path","message"}]}`; `field` (when given) names what is wrong.
  void fail(unsigned status, std::string message, std::string field = {});
  /// A nodeflow error mapped onto its HTTP status (errors.hpp).
  void fail(const caf::error& err);
  bool answered() const { return answered_.load(); }

  /// Server-Sent Events: opens the stream (status 200) instead of answering.
  void open_stream(std::string content_type = "text/event-stream", header_list headers = {});
  /// False once the client has gone (the stream is then dropped).
  bool write(std::string chunk);
  void end_stream();
  /// Called once when the client goes away while the stream is open.
  void on_close(std::function<void()> f);
  /// The server's side: the client went away.
  void closed_by_client();
  bool client_gone() const { return gone_.load(); }
  /// Whether an answer sent now would reach nobody: the client went away, or closed its
  /// side of the connection while it waited (a long poll). Cheap: one peek at the socket.
  bool peer_closed() const { return gone_.load() || (conn_ && conn_->peer_closed()); }

private:
  verb method_;
  std::string path_;
  std::map<std::string, std::string> query_;
  std::vector<std::pair<std::string, std::string>> query_all_;
  std::map<std::string, std::string> headers_;
  std::map<std::string, std::string> params_;
  std::string route_;
  principal who_;
  std::string remote_;
  std::string body_;
  std::shared_ptr<connection_port> conn_;
  std::atomic<bool> answered_{false};
  std::atomic<bool> gone_{false};
  std::atomic<bool> ended_{false};
  std::mutex close_mutex_;
  std::function<void()> on_close_;
};

using exchange_ptr = std::shared_ptr<exchange>;

/// Percent-decoding of a path segment or query value ('+' is a space in a query).
std::string percent_decode(std::string_view s, bool plus_is_space);

} // namespace nf::net::web
