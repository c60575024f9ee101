#include "net/web/server.hpp"

#include <atomic>
#include <cerrno>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include "config/folder_logger.hpp"
#include "flow/ascii.hpp"
#include "net/web/errors.hpp"
#include "proto/errors.hpp"

namespace nf::net::web {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

using plain_stream = beast::tcp_stream;

// How long a stream's write may wait for its client before what queues behind it counts
// against http.max_stream_buffer_bytes.
constexpr auto stream_stall = std::chrono::seconds{1};
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

// What stop() needs of an open connection, whichever stream it speaks over.
class connection {
public:
  virtual ~connection() = default;
  virtual void close() = 0;
};

struct shared_state {
  std::shared_ptr<const router> routes;
  server_options opts;
  std::atomic<size_t> inflight{0};
  std::mutex sessions_mutex;
  std::set<std::shared_ptr<connection>> sessions; ///< open connections, closed at stop
};

bool is_json_type(const std::string& content_type) {
  auto semi = content_type.find(';');
  auto base = content_type.substr(0, semi);
  while (!base.empty() && base.back() == ' ')
    base.pop_back();
  base = flow::ascii_lower(base);
  return base == "application/json" || (base.size() > 5 && base.compare(base.size() - 5, 5, "+json") == 0);
}

std::string allowed_list(const std::vector<verb>& allowed) {
  std::string out;
  for (auto v : allowed) {
    if (!out.empty())
      out += ", ";
    out += std::string{http::to_string(v)};
  }
  return out;
}

// The exchange's way back to its connection: everything is posted to the session's strand.
template <class Session>
class port final : public connection_port {
public:
  explicit port(std::shared_ptr<Session> s) : session_(std::move(s)) {}

  void send(response r) override {
    auto s = session_;
    asio::post(s->executor(), [s, r = std::move(r)]() mutable { s->answer(std::move(r)); });
  }

  void open_stream(std::string content_type, header_list headers) override {
    auto s = session_;
    asio::post(s->executor(), [s, ct = std::move(content_type), h = std::move(headers)]() mutable {
      s->open(std::move(ct), std::move(h));
    });
  }

  void stream_chunk(std::string data) override {
    auto s = session_;
    asio::post(s->executor(), [s, d = std::move(data)]() mutable { s->chunk(std::move(d)); });
  }

  void end_stream() override {
    auto s = session_;
    asio::post(s->executor(), [s] { s->finish_stream(); });
  }

  bool peer_closed() const override { return session_->peer_closed(); }

private:
  std::shared_ptr<Session> session_;
};

// One connection over `Stream`: plain_stream, or tls_stream after its handshake. Everything
// past the handshake (limits, keep-alive, timeouts, streams) is the same code for both.
template <class Stream>
class session final : public connection, public std::enable_shared_from_this<session<Stream>> {
  static constexpr bool is_tls = std::is_same_v<Stream, tls_stream>;

public:
  /// `tls`: the server's context, for tls_stream only.
  template <class... Tls>
  session(tcp::socket socket, std::shared_ptr<shared_state> state, Tls&... tls)
    : stream_(std::move(socket), tls...), state_(std::move(state)),
      fd_(static_cast<int>(tcp_layer().socket().native_handle())) {}

  void run() {
    asio::dispatch(executor(), [self = this->shared_from_this()] {
      if constexpr (is_tls)
        self->handshake();
      else
        self->read();
    });
  }

  auto executor() { return stream_.get_executor(); }

  /// A peek at the socket from any thread (the strand may be busy): the client closed its
  /// side (end of stream) or the connection failed. Data waiting (a pipelined request, a
  /// TLS record) means it is still there. Only while the socket is open: shutdown() clears
  /// fd_ before closing it.
  bool peer_closed() const {
    int fd = fd_.load();
    if (fd < 0)
      return true;
    char c = 0;
    auto n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
      return true;
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }

  void close() override {
    asio::post(executor(), [self = this->shared_from_this()] { self->shutdown(); });
  }

  // From the port, already on the strand.
  void answer(response r) {
    if (closed_)
      return;
    done_counting();
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(r.status);
    res->set(http::field::server, "nodeflow");
    res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers)
      res->set(k, v);
    res->keep_alive(keep_alive_);
    res->body() = std::move(r.body);
    res->prepare_payload();
    if (head_) {
      // The length GET would send, and no body.
      auto length = res->body().size();
      res->body().clear();
      res->content_length(length);
    }
    report(r.status);
    exchange_.reset();
    tcp_layer().expires_after(std::chrono::seconds(30));
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec || !self->keep_alive_)
                          return self->shutdown();
                        self->read();
                      });
  }

  void open(std::string content_type, header_list headers) {
    if (closed_)
      return;
    done_counting();
    report(200);
    streaming_ = true;
    auto res = std::make_shared<http::response<http::empty_body>>();
    res->version(11);
    res->result(http::status::ok);
    res->set(http::field::server, "nodeflow");
    res->set(http::field::content_type, content_type);
    res->set(http::field::cache_control, "no-cache");
    for (auto& [k, v] : headers)
      res->set(k, v);
    res->keep_alive(false);
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    writing_ = true;
    tcp_layer().expires_never();
    http::async_write_header(stream_, *sr,
                             [self = this->shared_from_this(), res, sr](beast::error_code ec,
                                                                        size_t) {
                               self->writing_ = false;
                               if (ec)
                                 return self->client_gone();
                               self->watch_for_close();
                               self->flush();
                             });
  }

  void chunk(std::string data) {
    if (closed_ || !streaming_)
      return;
    // A client that does not read leaves what it is sent here, behind a write its socket
    // does not take: past the cap, with that write stalled for stream_stall, its stream is
    // closed, and it reconnects with Last-Event-ID when it reads again (nothing is lost). A
    // client catching up on a long history reads, so its writes keep completing.
    if (writing_ && queued_ + data.size() > state_->opts.max_stream_buffer_bytes
        && std::chrono::steady_clock::now() - write_began_ > stream_stall) {
      folder_logger("net")->info("http_stream_closed remote={} route={} queued_bytes={} "
                                 "(http.max_stream_buffer_bytes {}): the client does not read",
                                 remote_address(), route_, queued_ + data.size(),
                                 state_->opts.max_stream_buffer_bytes);
      return client_gone();
    }
    queued_ += data.size();
    pending_.push_back(std::move(data));
    flush();
  }

  void finish_stream() {
    if (closed_ || !streaming_)
      return;
    ending_ = true;
    flush();
  }

private:
  beast::tcp_stream& tcp_layer() { return beast::get_lowest_layer(stream_); }

  std::string remote_address() {
    beast::error_code ec;
    auto ep = tcp_layer().socket().remote_endpoint(ec);
    return ec ? std::string{} : ep.address().to_string() + ":" + std::to_string(ep.port());
  }

  // A client that is not speaking TLS (plain HTTP to this port), offers nothing this
  // server accepts or stalls gets no HTTP answer: it is logged and its connection dropped.
  void handshake() {
    tcp_layer().expires_after(state_->opts.handshake_timeout);
    stream_.async_handshake(asio::ssl::stream_base::server,
                            [self = this->shared_from_this()](beast::error_code ec) {
                              if (!ec)
                                return self->read();
                              // Probes that connect and leave (load balancers) are routine.
                              bool routine = ec == asio::error::eof
                                             || ec == beast::error::timeout
                                             || ec == asio::error::connection_reset
                                             || ec == asio::error::operation_aborted;
                              folder_logger("net")->log(
                                routine ? spdlog::level::debug : spdlog::level::info,
                                "http_tls_handshake_failed remote={} error={}",
                                self->remote_address(), ec.message());
                              self->shutdown();
                            });
  }

  void read() {
    if (closed_)
      return;
    parser_.emplace();
    parser_->body_limit(state_->opts.max_body_bytes);
    parser_->header_limit(static_cast<uint32_t>(state_->opts.max_header_bytes));
    tcp_layer().expires_after(state_->opts.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(beast::error_code ec) {
    // stream_truncated: a TLS client that closed without its close_notify, a plain EOF.
    if (ec == http::error::end_of_stream || ec == asio::error::eof
        || ec == beast::error::timeout || ec == asio::error::operation_aborted
        || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated)
      return shutdown();
    started_ = std::chrono::steady_clock::now();
    route_.clear();
    method_ = verb::unknown;
    head_ = false;
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      return reject(413, "request body exceeds http.max_body_bytes ("
                           + std::to_string(state_->opts.max_body_bytes) + " bytes)");
    }
    if (ec == http::error::header_limit) {
      keep_alive_ = false;
      return reject(431, "request headers exceed " + std::to_string(state_->opts.max_header_bytes)
                           + " bytes");
    }
    if (ec) {
      keep_alive_ = false;
      return reject(400, "malformed HTTP request: " + ec.message());
    }
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    method_ = req.method();
    head_ = method_ == verb::head;
    dispatch(std::move(req));
  }

  void dispatch(http::request<http::string_body> req) {
    std::map<std::string, std::string> headers;
    for (const auto& f : req) {
      headers.emplace(flow::ascii_lower(f.name_string()), std::string{f.value()});
    }
    auto ex = std::make_shared<exchange>(req.method(), std::string{req.target()},
                                         std::move(headers), std::move(req.body()),
                                         std::make_shared<port<session>>(this->shared_from_this()));
    exchange_ = ex;
    if (auto remote = remote_address(); !remote.empty())
      ex->set_remote(std::move(remote));
    // HEAD is GET without the body: what a load balancer's health check sends.
    auto method = head_ ? verb::get : req.method();
    auto m = state_->routes->match(method, ex->path());
    if (!m.found) {
      if (m.path_known) {
        ex->respond(response{405, "application/json",
                             boost::json::serialize(error_body(
                               405, "method " + std::string{http::to_string(req.method())}
                                      + " is not allowed on " + ex->path() + " (allowed: "
                                      + allowed_list(m.allowed) + ")",
                               {})),
                             {{"Allow", allowed_list(m.allowed)}}});
        return;
      }
      if (method == verb::get && ui_files::is_ui_path(ex->path()))
        return serve_ui(*ex);
      ex->fail(404, "no route " + std::string{http::to_string(req.method())} + " " + ex->path());
      return;
    }
    const auto& r = *m.found;
    if (head_ && r.long_lived) {
      ex->respond(response{405, "application/json",
                           boost::json::serialize(error_body(
                             405, "HEAD is not served on a long poll or a stream: use GET", {})),
                           {{"Allow", "GET"}}});
      return;
    }
    route_ = r.pattern;
    ex->set_route(r.pattern);
    ex->set_params(std::move(m.params));
    if (state_->opts.auth && r.needs != access::open) {
      auto who = state_->opts.auth->authenticate(*ex);
      if (who.status != 0) {
        ex->fail(who.status, who.message, "X-Authorization");
        return;
      }
      if (!role_allows(who.who.role, r.needs)) {
        ex->fail(403, "role " + who.who.role + " may not " + std::string{http::to_string(req.method())}
                        + " " + r.pattern + ": it needs " + access_name(r.needs) + " or above");
        return;
      }
      ex->set_principal(std::move(who.who));
    }
    if (auto misfit = misfit_query(r, ex->query_list())) {
      ex->fail(400, std::move(misfit->message), misfit->name);
      return;
    }
    if (r.body == body_kind::json && !ex->body().empty()) {
      auto ct = ex->header("content-type");
      if (!ct.empty() && !is_json_type(ct)) {
        ex->fail(415, "Content-Type " + ct + " is not supported here: send application/json",
                 "Content-Type");
        return;
      }
    }
    if (!r.long_lived) {
      auto now = state_->inflight.fetch_add(1) + 1;
      counted_ = true;
      if (now > state_->opts.max_inflight) {
        ex->fail(429, "the node is shedding load: " + std::to_string(now - 1)
                        + " requests in flight (http.max_inflight " +
                        std::to_string(state_->opts.max_inflight) + ")");
        return;
      }
    }
    tcp_layer().expires_never(); // a handler (a long poll) may take its time
    try {
      r.fn(ex);
    } catch (const std::exception& e) {
      folder_logger("net")->error("http_handler_threw route={} what={}", r.pattern, e.what());
      ex->fail(500, std::string{"internal error: "} + e.what());
    }
  }

  // The UI's files are public (they hold no data; every API call they make is checked).
  // They are revalidated by ETag at each load, so a node upgraded in place serves its own.
  void serve_ui(exchange& ex) {
    route_ = "/ui";
    const auto& ui = state_->opts.ui;
    auto asset = ui ? ui->find(ex.path()) : std::nullopt;
    if (!asset) {
      ex.fail(404, ui ? "no UI file " + ex.path() : "the web UI is not served by this node");
      return;
    }
    header_list headers{{"ETag", asset->etag},
                        {"Cache-Control", "no-cache"},
                        {"Content-Security-Policy", ui_files::content_security_policy()},
                        {"X-Content-Type-Options", "nosniff"},
                        {"Referrer-Policy", "no-referrer"},
                        {"X-Frame-Options", "DENY"}};
    if (ex.header("if-none-match") == asset->etag) {
      ex.respond(response{304, asset->content_type, {}, std::move(headers)});
      return;
    }
    ex.respond(response{200, asset->content_type, std::move(asset->body), std::move(headers)});
  }

  void reject(unsigned status, std::string message) {
    answer(response{status, "application/json",
                    boost::json::serialize(error_body(status, message, {})), {}});
  }

  void done_counting() {
    if (counted_) {
      counted_ = false;
      state_->inflight.fetch_sub(1);
    }
  }

  void report(unsigned status) {
    if (state_->opts.on_answer) {
      auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      state_->opts.on_answer(route_, method_, status, secs);
    }
  }

  // While a stream is open the client sends nothing; a read completing means it went away.
  void watch_for_close() {
    stream_.async_read_some(asio::buffer(probe_),
                            [self = this->shared_from_this()](beast::error_code, size_t) {
                              self->client_gone();
                            });
  }

  void flush() {
    if (writing_ || closed_)
      return;
    if (pending_.empty()) {
      if (ending_) {
        writing_ = true;
        asio::async_write(stream_, asio::buffer(last_chunk_),
                          [self = this->shared_from_this()](beast::error_code, size_t) {
                            self->writing_ = false;
                            self->shutdown();
                          });
      }
      return;
    }
    // Everything queued goes out as one chunk.
    std::string data;
    for (auto& p : pending_)
      data += p;
    pending_.clear();
    queued_ = 0;
    auto buf = std::make_shared<std::string>();
    char size_line[32];
    auto n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
    buf->reserve(data.size() + static_cast<size_t>(n) + 2);
    buf->append(size_line, static_cast<size_t>(n));
    buf->append(data);
    buf->append("\r\n");
    writing_ = true;
    write_began_ = std::chrono::steady_clock::now();
    asio::async_write(stream_, asio::buffer(*buf),
                      [self = this->shared_from_this(), buf](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        if (ec)
                          return self->client_gone();
                        self->flush();
                      });
  }

  void client_gone() {
    if (auto ex = exchange_)
      ex->closed_by_client();
    shutdown();
  }

  void shutdown() {
    if (closed_)
      return;
    closed_ = true;
    done_counting();
    if (auto ex = std::move(exchange_))
      ex->closed_by_client();
    // No TLS close_notify: every answer is delimited by its length or its last chunk, so a
    // client loses nothing to the plain close, and it never waits on a slow peer.
    beast::error_code ec;
    fd_.store(-1);
    tcp_layer().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp_layer().socket().close(ec);
    std::lock_guard lock{state_->sessions_mutex};
    state_->sessions.erase(this->shared_from_this());
  }

  Stream stream_;
  std::shared_ptr<shared_state> state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<exchange> exchange_;
  bool keep_alive_ = true;
  bool counted_ = false;
  bool closed_ = false;
  std::atomic<int> fd_{-1};  ///< the socket's descriptor while open (peer_closed)
  bool streaming_ = false;
  bool writing_ = false;
  bool ending_ = false;
  std::deque<std::string> pending_;
  /// Bytes of the stream queued behind the write in flight (pending_).
  size_t queued_ = 0;
  /// When the stream's write in flight began (a write its client does not take stalls).
  std::chrono::steady_clock::time_point write_began_;
  std::array<char, 512> probe_{};
  std::string last_chunk_ = "0\r\n\r\n";
  std::string route_;
  verb method_ = verb::unknown;
  bool head_ = false;
  std::chrono::steady_clock::time_point started_;
};

} // namespace

struct server::impl {
  std::shared_ptr<shared_state> state = std::make_shared<shared_state>();
  asio::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  bool running = false;

  void accept() {
    acceptor->async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor->is_open())
          return;
        folder_logger("net")->warn("http_accept_failed error={}", ec.message());
      } else {
        beast::error_code ignored;
        s.set_option(tcp::no_delay(true), ignored);
        if (state->opts.tls)
          open(std::make_shared<session<tls_stream>>(std::move(s), state, *state->opts.tls));
        else
          open(std::make_shared<session<plain_stream>>(std::move(s), state));
      }
      accept();
    });
  }

  template <class Session>
  void open(std::shared_ptr<Session> sess) {
    {
      std::lock_guard lock{state->sessions_mutex};
      state->sessions.insert(sess);
    }
    sess->run();
  }
};

server::server(std::shared_ptr<const router> routes, server_options opts)
  : impl_(std::make_unique<impl>()) {
  impl_->state->routes = std::move(routes);
  impl_->state->opts = std::move(opts);
}

server::~server() {
  stop();
}

caf::expected<uint16_t> server::bind() {
  auto& st = *impl_;
  if (st.acceptor)
    return st.acceptor->local_endpoint().port();
  const auto& opts = st.state->opts;
  beast::error_code ec;
  auto addr = asio::ip::make_address(opts.host, ec);
  if (ec)
    return nf::make_error(errc::invalid, "http.host: expected an IP address, got \"" + opts.host
                                           + "\" (" + ec.message() + ")");
  tcp::endpoint ep{addr, opts.port};
  st.acceptor.emplace(st.ioc);
  st.acceptor->open(ep.protocol(), ec);
  if (!ec)
    st.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    st.acceptor->bind(ep, ec);
  if (!ec)
    st.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    st.acceptor.reset();
    return nf::make_error(errc::unavailable, "cannot listen for HTTP on " + opts.host + ":"
                                               + std::to_string(opts.port) + ": " + ec.message());
  }
  return st.acceptor->local_endpoint().port();
}

caf::expected<uint16_t> server::start() {
  auto& st = *impl_;
  auto bound = bind();
  if (!bound)
    return bound;
  st.work.emplace(asio::make_work_guard(st.ioc));
  st.accept();
  for (int i = 0; i < std::max(1, st.state->opts.threads); ++i)
    st.threads.emplace_back([&st] { st.ioc.run(); });
  st.running = true;
  return bound;
}

void server::stop() {
  auto& st = *impl_;
  if (!st.running)
    return;
  st.running = false;
  asio::post(st.ioc, [&st] {
    beast::error_code ec;
    st.acceptor->close(ec);
  });
  std::vector<std::shared_ptr<connection>> open;
  {
    std::lock_guard lock{st.state->sessions_mutex};
    open.assign(st.state->sessions.begin(), st.state->sessions.end());
  }
  for (auto& s : open)
    s->close();
  st.work.reset();
  // Handlers still waiting on the engine hold their sessions; stop() does not wait for them.
  st.ioc.stop();
  for (auto& t : st.threads)
    t.join();
  st.threads.clear();
  std::lock_guard lock{st.state->sessions_mutex};
  st.state->sessions.clear();
}

} // namespace nf::net::web
