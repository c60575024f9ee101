#include "tests/support/http_client.hpp"

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include <poll.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

namespace nf::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class Message>
void copy_headers(const Message& m, http_reply& out) {
  out.status = m.result_int();
  for (const auto& f : m)
    out.headers[lower(std::string{f.name_string()})] = std::string{f.value()};
}

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
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  void connect() {
    stream.emplace(ioc);
    stream->expires_after(timeout);
    stream->connect(tcp::endpoint{asio::ip::make_address(host), port});
    buffer.clear();
  }

  http_reply once(http::request<http::string_body>& req) {
    if (!stream)
      connect();
    stream->expires_after(timeout);
    http::write(*stream, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1u << 30);
    http::read(*stream, buffer, parser);
    auto res = parser.release();
    http_reply out;
    copy_headers(res, out);
    out.body = std::move(res.body());
    if (!res.keep_alive())
      stream.reset();
    return out;
  }
};

http_client::http_client(std::string host, uint16_t port, std::chrono::milliseconds timeout)
  : impl_(new impl{std::move(host), port, timeout, {}, {}, {}}) {}

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
  impl_->stream->expires_after(impl_->timeout);
  asio::write(impl_->stream->socket(), asio::buffer(bytes));
  http::response_parser<http::string_body> parser;
  http::read(*impl_->stream, impl_->buffer, parser);
  auto res = parser.release();
  http_reply out;
  copy_headers(res, out);
  out.body = std::move(res.body());
  impl_->stream.reset();
  return out;
}

struct sse_reader::impl {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
  std::string raw;     ///< chunked bytes not yet decoded
  std::string decoded; ///< event text not yet split into events
  bool chunked = true;
  bool last_chunk = false;
  size_t comments = 0;

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
                       const http_client::header_list& headers)
  : impl_(new impl) {
  impl_->stream.expires_after(std::chrono::seconds(30));
  impl_->stream.connect(tcp::endpoint{asio::ip::make_address(host), port});
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host);
  req.set(http::field::accept, "text/event-stream");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  http::write(impl_->stream, req);
  http::response_parser<http::string_body> parser;
  http::read_header(impl_->stream, impl_->buffer, parser);
  copy_headers(parser.get(), head_);
  impl_->chunked = parser.chunked();
  if (head_.status != 200) {
    // An error answer: read its body whole.
    http::read(impl_->stream, impl_->buffer, parser);
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
    // A synchronous read has no timeout of its own (expires_after bounds asynchronous
    // operations only): wait for the socket first.
    pollfd fd{impl_->stream.socket().native_handle(), POLLIN, 0};
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    int ready = ::poll(&fd, 1, static_cast<int>(std::max<int64_t>(ms, 1)));
    if (ready == 0 || (ready < 0 && errno == EINTR))
      continue;
    char buf[4096];
    beast::error_code ec;
    auto n = impl_->stream.read_some(asio::buffer(buf), ec);
    if (ec) {
      ended_ = true;
      continue;
    }
    impl_->raw.append(buf, n);
    impl_->decode();
  }
}

size_t sse_reader::comments() const {
  return impl_->comments;
}

void sse_reader::close() {
  beast::error_code ec;
  impl_->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  impl_->stream.socket().close(ec);
}

} // namespace nf::test
