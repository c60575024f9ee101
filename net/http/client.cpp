#include "net/http/client.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace nf::http {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// Responses larger than this are cut off with an error rather than held in memory.
constexpr std::uint64_t max_body_bytes = 16 * 1024 * 1024;

/// One request's life: resolve, connect, write, read; `finish` runs exactly once.
class exchange : public std::enable_shared_from_this<exchange> {
public:
  exchange(asio::io_context& ioc, const request& req, url_parts url,
           const egress_policy& egress, outcome& out, std::function<void()> done)
    : req_(req), url_(std::move(url)), egress_(egress), resolver_(ioc), stream_(ioc),
      resolve_timer_(ioc), out_(out), done_(std::move(done)) {
  }

  void start() {
    auto self = shared_from_this();
    // The resolver has no timeout of its own.
    resolve_timer_.expires_after(req_.connect_timeout);
    resolve_timer_.async_wait([self](beast::error_code ec) {
      if (!ec)
        self->resolver_.cancel();
    });
    resolver_.async_resolve(url_.host, url_.port,
                            [self](beast::error_code ec, tcp::resolver::results_type results) {
                              self->resolve_timer_.cancel();
                              self->on_resolve(ec, std::move(results));
                            });
  }

private:
  std::string where() const { return url_.host + ":" + url_.port; }

  void fail(const std::string& phase, beast::error_code ec) {
    std::string what = ec == beast::error::timeout || ec == asio::error::operation_aborted
                         ? "timed out"
                         : ec.message();
    finish(phase + " " + where() + ": " + what);
  }

  void finish(std::string error) {
    if (finished_)
      return;
    finished_ = true;
    if (!error.empty())
      out_.error = std::move(error);
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    done_();
  }

  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    if (ec)
      return fail("resolve", ec);
    // Every address is checked, and the connection is tried on these same results (no
    // second lookup): one refused address refuses the request, as a name that resolves
    // to an allowed and a refused address is one an attacker may be steering.
    for (const auto& entry : results)
      if (auto why = egress_.refuse_address(url_.host,
                                            entry.endpoint().address().to_string())) {
        out_.refused = true;
        return finish(*why);
      }
    stream_.expires_after(req_.connect_timeout);
    auto self = shared_from_this();
    stream_.async_connect(results, [self](beast::error_code ec, const tcp::endpoint&) {
      self->on_connect(ec);
    });
  }

  void on_connect(beast::error_code ec) {
    if (ec)
      return fail("connect", ec);
    msg_.method_string(req_.method);
    msg_.target(url_.target);
    msg_.version(11);
    msg_.set(bhttp::field::host, url_.host);
    msg_.set(bhttp::field::user_agent, "nodeflow");
    msg_.set(bhttp::field::connection, "close");
    for (const auto& [k, v] : req_.headers)
      msg_.set(k, v);
    if (!req_.body.empty() || req_.method == "POST" || req_.method == "PUT"
        || req_.method == "PATCH") {
      msg_.body() = req_.body;
      msg_.prepare_payload();
    }
    stream_.expires_after(req_.read_timeout);
    auto self = shared_from_this();
    bhttp::async_write(stream_, msg_, [self](beast::error_code ec, std::size_t) {
      self->on_write(ec);
    });
  }

  void on_write(beast::error_code ec) {
    if (ec)
      return fail("write", ec);
    parser_.body_limit(max_body_bytes);
    if (req_.method == "HEAD")
      parser_.skip(true);
    auto self = shared_from_this();
    bhttp::async_read(stream_, buffer_, parser_, [self](beast::error_code ec, std::size_t) {
      self->on_read(ec);
    });
  }

  void on_read(beast::error_code ec) {
    if (ec)
      return fail("read", ec);
    auto& msg = parser_.get();
    response r;
    r.status = static_cast<int>(msg.result_int());
    r.reason = std::string{msg.reason()};
    for (const auto& field : msg)
      r.headers.emplace_back(std::string{field.name_string()}, std::string{field.value()});
    r.body = std::move(msg.body());
    out_.resp = std::move(r);
    finish("");
  }

  const request& req_;
  url_parts url_;
  const egress_policy& egress_;
  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  asio::steady_timer resolve_timer_;
  bhttp::request<bhttp::string_body> msg_;
  beast::flat_buffer buffer_;
  bhttp::response_parser<bhttp::string_body> parser_;
  outcome& out_;
  std::function<void()> done_;
  bool finished_ = false;
};

} // namespace

std::vector<outcome> beast_client::perform_all(const std::vector<request>& reqs,
                                              size_t max_in_flight) {
  std::vector<outcome> out(reqs.size());
  asio::io_context ioc{1};
  size_t next = 0;
  max_in_flight = std::max<size_t>(1, max_in_flight);
  std::function<void()> launch = [&] {
    while (next < reqs.size()) {
      auto i = next++;
      std::string error;
      auto url = parse_url(reqs[i].url, error);
      if (!url) {
        out[i].error = std::move(error);
        continue;
      }
      if (!known_method(reqs[i].method)) {
        out[i].error = "unsupported HTTP method \"" + reqs[i].method + "\"";
        continue;
      }
      // A denied name (or address literal) goes no further than here: not even resolved.
      if (auto why = egress_.refuse_name(url->host)) {
        out[i].error = std::move(*why);
        out[i].refused = true;
        continue;
      }
      // Each finished exchange starts the next one, keeping max_in_flight busy.
      std::make_shared<exchange>(ioc, reqs[i], std::move(*url), egress_, out[i], [&] { launch(); })
        ->start();
      return;
    }
  };
  for (size_t k = 0; k < max_in_flight && next < reqs.size(); ++k)
    launch();
  ioc.run();
  return out;
}

} // namespace nf::http
