#include "tests/support/http_client.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include "flow/ascii.hpp"

namespace nf::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

template <class Message>
void copy_headers(const Message& m, http_reply& out) {
  out.status = m.result_int();
  for (const auto& f : m)
    out.headers[flow::ascii_lower(f.name_string())] = std::string{f.value()};
}

// One connection, plain or TLS: `with` hands whichever stream is open to a generic reader
// or writer, so every request below is written once for both.
class connection {
public:
  connection(asio::io_context& ioc, const std::optional<tls_trust>& trust) : ioc_(ioc) {
    if (!trust)
      return;
    ctx_.emplace(asio::ssl::context::tls_client);
    ctx_->add_certificate_authority(asio::buffer(trust->certificate_pem));
    ctx_->set_verify_mode(asio::ssl::verify_peer);
  }

  void connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
    reset();
    tcp::endpoint ep{asio::ip::make_address(host), port};
    if (!ctx_) {
      plain_.emplace(ioc_);
      plain_->expires_after(timeout);
      plain_->connect(ep);
      return;
    }
    tls_.emplace(ioc_, *ctx_);
    tls_->set_verify_callback(asio::ssl::host_name_verification(host));
    tcp().expires_after(timeout);
    tcp().connect(ep);
    tls_->handshake(asio::ssl::stream_base::client);
  }

  bool is_open() const { return plain_ || tls_; }
  void reset() {
    plain_.reset();
    tls_.reset();
  }

  beast::tcp_stream& tcp() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }

  template <class F>
  decltype(auto) with(F&& f) {
    return tls_ ? f(*tls_) : f(*plain_);
  }

private:
  asio::io_context& ioc_;
  std::optional<asio::ssl::context> ctx_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
};

} // namespace

boost::json::value http_reply::json() const {
  boost::json::error_code ec;
  auto v = boost::json::parse(body, ec);
  return ec ? boost::json::value{} : v;
}

std::string http_reply::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string{} : it->second;
}

struct http_client::impl {
  std::string host;
  uint16_t port;
  std::chrono::milliseconds timeout;
  asio::io_context ioc;
  connection stream;
  beast::flat_buffer buffer;

  impl(std::string host_, uint16_t port_, std::chrono::milliseconds timeout_,
       const std::optional<tls_trust>& tls)
    : host(std::move(host_)), port(port_), timeout(timeout_), stream(ioc, tls) {}

  void connect() {
    stream.connect(host, port, timeout);
    buffer.clear();
  }

  http_reply once(http::request<http::string_body>& req) {
    if (!stream.is_open())
      connect();
    stream.tcp().expires_after(timeout);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1u << 30);
    // A HEAD answer has the headers of a GET (its Content-Length too) and no body.
    parser.skip(req.method() == http::verb::head);
    stream.with([&](auto& s) {
      http::write(s, req);
      http::read(s, buffer, parser);
    });
    auto res = parser.release();
    http_reply out;
    copy_headers(res, out);
    out.body = std::move(res.body());
    if (!res.keep_alive())
      stream.reset();
    return out;
  }
};

http_client::http_client(std::string host, uint16_t port, std::chrono::milliseconds timeout,
                         std::optional<tls_trust> tls)
  : impl_(new impl{std::move(host), port, timeout, tls}) {}

http_client::~http_client() {
  delete impl_;
}

http_reply http_client::request(const std::string& method, const std::string& target,
                                const std::string& body, const std::string& content_type,
                                const header_list& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, impl_->host);
  req.keep_alive(true);
  for (const auto& [k, v] : headers)
    req.set(k, v);
  if (!body.empty() || method == "POST" || method == "PUT") {
    if (!content_type.empty())
      req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.prepare_payload();
  // A kept-alive connection the server closed meanwhile fails at once: retry on a new one.
  for (int pass = 0;; ++pass) {
    try {
      return impl_->once(req);
    } catch (const beast::system_error&) {
      impl_->stream.reset();
      if (pass == 1)
        throw;
    }
  }
}

http_reply http_client::raw(const std::string& bytes) {
  impl_->connect();
  impl_->stream.tcp().expires_after(impl_->timeout);
  http::response_parser<http::string_body> parser;
  impl_->stream.with([&](auto& s) {
    asio::write(s, asio::buffer(bytes));
    http::read(s, impl_->buffer, parser);
  });
  auto res = parser.release();
  http_reply out;
  copy_headers(res, out);
  out.body = std::move(res.body());
  impl_->stream.reset();
  return out;
}

struct sse_reader::impl {
  asio::io_context ioc;
  std::optional<connection> stream; ///< made once `ioc` is
  beast::flat_buffer buffer;
  std::string raw;     ///< chunked bytes not yet decoded
  std::string decoded; ///< event text not yet split into events
  bool chunked = true;
  bool last_chunk = false;
  size_t comments = 0;
  std::array<char, 4096> chunk; ///< the buffer of the read in flight
  bool reading = false;
  bool read_done = false;
  size_t got = 0;
  beast::error_code read_error;

  // Moves whole chunks from `raw` to `decoded`.
  void decode() {
    if (!chunked) {
      decoded += raw;
      raw.clear();
      return;
    }
    for (;;) {
      auto eol = raw.find("\r\n");
      if (eol == std::string::npos)
        return;
      auto size = std::stoul(raw.substr(0, eol), nullptr, 16);
      if (size == 0) {
        last_chunk = true;
        raw.clear();
        return;
      }
      if (raw.size() < eol + 2 + size + 2)
        return;
      decoded += raw.substr(eol + 2, size);
      raw.erase(0, eol + 2 + size + 2);
    }
  }

  std::optional<event> take() {
    auto end = decoded.find("\n\n");
    if (end == std::string::npos)
      return std::nullopt;
    auto block = decoded.substr(0, end);
    decoded.erase(0, end + 2);
    event ev;
    ev.type = "message";
    bool any = false;
    size_t pos = 0;
    while (pos <= block.size()) {
      auto nl = block.find('\n', pos);
      auto line = block.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? block.size() + 1 : nl + 1;
      if (line.empty() || line[0] == ':')
        continue;
      auto colon = line.find(':');
      auto field = line.substr(0, colon);
      auto value = colon == std::string::npos ? std::string{} : line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ')
        value.erase(0, 1);
      if (field == "id") {
        ev.id = value;
        any = true;
      } else if (field == "event") {
        ev.type = value;
        any = true;
      } else if (field == "data") {
        ev.data += (ev.data.empty() ? "" : "\n") + value;
        any = true;
      }
    }
    if (!any) {
      ++comments; // a comment-only block (a keep-alive)
      return take();
    }
    return ev;
  }
};

sse_reader::sse_reader(const std::string& host, uint16_t port, const std::string& target,
                       const http_client::header_list& headers, std::optional<tls_trust> tls)
  : impl_(new impl) {
  impl_->stream.emplace(impl_->ioc, tls);
  impl_->stream->connect(host, port, std::chrono::seconds(30));
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host);
  req.set(http::field::accept, "text/event-stream");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  http::response_parser<http::string_body> parser;
  impl_->stream->with([&](auto& s) {
    http::write(s, req);
    http::read_header(s, impl_->buffer, parser);
  });
  copy_headers(parser.get(), head_);
  impl_->chunked = parser.chunked();
  if (head_.status != 200) {
    // An error answer: read its body whole.
    impl_->stream->with([&](auto& s) { http::read(s, impl_->buffer, parser); });
    head_.body = parser.get().body();
    ended_ = true;
    return;
  }
  impl_->raw.assign(static_cast<const char*>(impl_->buffer.data().data()),
                    impl_->buffer.size());
  impl_->buffer.consume(impl_->buffer.size());
  impl_->decode();
}

sse_reader::~sse_reader() {
  close();
  delete impl_;
}

std::optional<sse_reader::event> sse_reader::next(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto ev = impl_->take())
      return ev;
    if (ended_ || impl_->last_chunk) {
      ended_ = true;
      return std::nullopt;
    }
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::milliseconds(0))
      return std::nullopt;
    // One asynchronous read stays in flight across calls, and the io_context runs only until
    // the deadline: with TLS, bytes the socket already gave may wait undecrypted in the
    // stream's own buffers, so waiting on the socket could miss them.
    if (!impl_->reading) {
      impl_->reading = true;
      impl_->stream->tcp().expires_never();
      impl_->stream->with([&](auto& s) {
        s.async_read_some(asio::buffer(impl_->chunk), [this](beast::error_code ec, size_t n) {
          impl_->reading = false;
          impl_->read_error = ec;
          impl_->got = n;
          impl_->read_done = true;
        });
      });
    }
    impl_->ioc.restart();
    impl_->ioc.run_for(left);
    if (!impl_->read_done)
      continue;
    impl_->read_done = false;
    if (impl_->read_error) {
      ended_ = true;
      continue;
    }
    impl_->raw.append(impl_->chunk.data(), impl_->got);
    impl_->decode();
  }
}

size_t sse_reader::comments() const {
  return impl_->comments;
}

void sse_reader::close() {
  beast::error_code ec;
  impl_->stream->tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
  impl_->stream->tcp().socket().close(ec);
}

} // namespace nf::test
