#include "tests/support/http_test_server.hpp"

#include <chrono>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace nf::test {

struct http_test_server::impl {
  impl() : acceptor(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    accept();
    thread = std::thread{[this] { ioc.run(); }};
  }

  ~impl() {
    ioc.stop();
    thread.join();
  }

  struct session : std::enable_shared_from_this<session> {
    session(impl& srv, boost::asio::ip::tcp::socket s) : srv(srv), stream(std::move(s)) {}

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
        std::lock_guard<std::mutex> g{srv.mtx};
        auto n = srv.seen.size();
        srv.seen.push_back(r);
        if (srv.on_request)
          c = srv.on_request(r, n);
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

    impl& srv;
    boost::beast::tcp_stream stream;
    boost::beast::flat_buffer buffer;
    boost::beast::http::request<boost::beast::http::string_body> req;
    boost::beast::http::response<boost::beast::http::string_body> res;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  void accept() {
    acceptor.async_accept([this](boost::beast::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec)
        return;
      std::make_shared<session>(*this, std::move(s))->start();
      accept();
    });
  }

  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor;
  std::thread thread;
  std::mutex mtx;
  handler on_request;
  std::vector<seen_request> seen;
};

http_test_server::http_test_server() : impl_(std::make_unique<impl>()) {}

http_test_server::~http_test_server() = default;

unsigned short http_test_server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

std::string http_test_server::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port()) + path;
}

void http_test_server::on_request(handler h) {
  std::lock_guard<std::mutex> g{impl_->mtx};
  impl_->on_request = std::move(h);
}

std::vector<seen_request> http_test_server::requests() const {
  std::lock_guard<std::mutex> g{impl_->mtx};
  return impl_->seen;
}

} // namespace nf::test
