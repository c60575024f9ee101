#pragma once

// A small HTTP server on 127.0.0.1 for the relay and HTTP-task suites (Beast, one
// thread). It records every request and answers what the test's handler says, so a
// test can fail a share of requests, every request, or none.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

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

  http_test_server() : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    accept();
    thread_ = std::thread{[this] { ioc_.run(); }};
  }

  ~http_test_server() {
    ioc_.stop();
    thread_.join();
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port()) + path;
  }

  void on_request(handler h) {
    std::lock_guard<std::mutex> g{mtx_};
    handler_ = std::move(h);
  }

  std::vector<seen_request> requests() const {
    std::lock_guard<std::mutex> g{mtx_};
    return seen_;
  }

private:

  struct session : std::enable_shared_from_this<session> {
    session(http_test_server& srv, boost::asio::ip::tcp::socket s)
      : srv(srv), stream(std::move(s)) {}

    void start() {
      auto self = shared_from_this();
      boost::beast::http::async_read(stream, buffer, req,
                                     [self](boost::beast::error_code ec, std::size_t) {
                                       if (!ec)
                                         self->reply();
                                     });
    }

    void reply() {
      seen_request r;
      r.method = std::string{req.method_string()};
      r.target = std::string{req.target()};
      for (const auto& f : req)
        r.headers.emplace_back(std::string{f.name_string()}, std::string{f.value()});
      r.body = req.body();
      canned_reply c;
      {
        std::lock_guard<std::mutex> g{srv.mtx_};
        auto n = srv.seen_.size();
        srv.seen_.push_back(r);
        if (srv.handler_)
          c = srv.handler_(r, n);
      }
      if (c.delay_ms > 0) {
        timer = std::make_unique<boost::asio::steady_timer>(stream.get_executor());
        timer->expires_after(std::chrono::milliseconds(c.delay_ms));
        auto self = shared_from_this();
        timer->async_wait([self, c](boost::beast::error_code) { self->send(c); });
        return;
      }
      send(c);
    }

    void send(const canned_reply& c) {
      res.result(static_cast<unsigned>(c.status));
      res.version(11);
      res.set(boost::beast::http::field::content_type, c.content_type);
      res.set("X-Test", "yes");
      res.keep_alive(false);
      res.body() = c.body;
      res.prepare_payload();
      auto self = shared_from_this();
      boost::beast::http::async_write(stream, res, [self](boost::beast::error_code, std::size_t) {
        boost::beast::error_code ignored;
        self->stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
      });
    }

    http_test_server& srv;
    boost::beast::tcp_stream stream;
    boost::beast::flat_buffer buffer;
    boost::beast::http::request<boost::beast::http::string_body> req;
    boost::beast::http::response<boost::beast::http::string_body> res;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  void accept() {
    acceptor_.async_accept([this](boost::beast::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec)
        return;
      std::make_shared<session>(*this, std::move(s))->start();
      accept();
    });
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  mutable std::mutex mtx_;
  handler handler_;
  std::vector<seen_request> seen_;
};

} // namespace nf::test
