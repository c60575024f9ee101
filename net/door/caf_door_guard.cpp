#include "net/door/caf_door_guard.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "config/folder_logger.hpp"
#include "net/door/basp_frames.hpp"
#include "proto/errors.hpp"

namespace nf::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t read_chunk = 65536;

} // namespace

struct caf_door_guard::impl : std::enable_shared_from_this<caf_door_guard::impl> {
  door_guard_options opts;
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  std::atomic<size_t> open{0};
  uint64_t buffered = 0; ///< bytes of frames still arriving, over all connections (io thread)
  struct link;
  std::set<std::shared_ptr<link>> links; ///< io thread only
  // Refusals are logged once a second at most: a flood must not flood the log too.
  std::chrono::steady_clock::time_point last_refusal_log{};
  uint64_t refusals_unlogged = 0;

  explicit impl(door_guard_options o) : opts(std::move(o)) {}

  void refused(const std::string& what) {
    ++refusals_unlogged;
    auto now = std::chrono::steady_clock::now();
    if (now - last_refusal_log < std::chrono::seconds{1})
      return;
    folder_logger("net")->warn("{}_refused what=\"{}\" refusals={} (node.max_connections "
                               "{}, node.max_message_bytes {}, node.max_buffered_bytes {})",
                               opts.name, what, refusals_unlogged, opts.max_connections,
                               opts.max_message_bytes, opts.max_buffered_bytes);
    refusals_unlogged = 0;
    last_refusal_log = now;
  }

  struct link : std::enable_shared_from_this<link> {
    impl& g;
    tcp::socket client;
    tcp::socket node;
    std::vector<uint8_t> up; ///< from the client, starting at a frame's first byte
    size_t filled = 0;
    size_t counted = 0;      ///< of `filled`, what `g.buffered` holds for this link
    std::vector<uint8_t> down = std::vector<uint8_t>(read_chunk);
    bool closed = false;

    link(impl& guard, tcp::socket c) : g(guard), client(std::move(c)), node(guard.ioc) {}

    void start() {
      auto self = shared_from_this();
      node.async_connect(tcp::endpoint{asio::ip::address_v4::loopback(), g.opts.target_port},
                         [self](const boost::system::error_code& ec) {
                           if (ec) {
                             folder_logger("net")->warn("{}_relay_failed error=\"{}\"",
                                                        self->g.opts.name, ec.message());
                             self->close();
                             return;
                           }
                           boost::system::error_code ignored;
                           self->node.set_option(tcp::no_delay(true), ignored);
                           self->client.set_option(tcp::no_delay(true), ignored);
                           self->read_up();
                           self->read_down();
                         });
    }

    // Client to node: whole frames only.
    void read_up() {
      if (closed)
        return;
      if (up.size() < filled + read_chunk)
        up.resize(filled + read_chunk);
      auto self = shared_from_this();
      client.async_read_some(asio::buffer(up.data() + filled, read_chunk),
                             [self](const boost::system::error_code& ec, size_t n) {
                               if (ec) {
                                 self->close();
                                 return;
                               }
                               self->took(n);
                             });
    }

    void took(size_t n) {
      filled += n;
      if (!g.opts.whole_frames) {
        forward(filled);
        return;
      }
      auto scan = scan_basp_frames(up.data(), filled, g.opts.max_message_bytes);
      if (scan.refused_payload > 0) {
        g.refused("a message of " + std::to_string(scan.refused_payload) + " bytes");
        close();
        return;
      }
      // What is left after the whole frames is a frame still arriving: counted against
      // node.max_buffered_bytes while it waits.
      size_t pending = filled - scan.complete;
      if (pending > counted && g.buffered + (pending - counted) > g.opts.max_buffered_bytes) {
        g.refused("a message arriving while " + std::to_string(g.buffered)
                  + " bytes of others are");
        close();
        return;
      }
      g.buffered = g.buffered - counted + pending;
      counted = pending;
      if (scan.complete == 0) {
        read_up();
        return;
      }
      forward(scan.complete);
    }

    // The first `done` bytes of `up` to the node; then reads on.
    void forward(size_t done) {
      auto self = shared_from_this();
      asio::async_write(node, asio::buffer(up.data(), done),
                        [self, done](const boost::system::error_code& ec, size_t) {
                          if (ec) {
                            self->close();
                            return;
                          }
                          self->sent(done);
                        });
    }

    void sent(size_t done) {
      std::memmove(up.data(), up.data() + done, filled - done);
      filled -= done;
      if (up.capacity() > 4 * read_chunk && filled < read_chunk) { // after a large frame
        up.resize(filled);
        up.shrink_to_fit();
      }
      read_up();
    }

    // Node to client: as it comes.
    void read_down() {
      if (closed)
        return;
      auto self = shared_from_this();
      node.async_read_some(asio::buffer(down), [self](const boost::system::error_code& ec,
                                                      size_t n) {
        if (ec) {
          self->close();
          return;
        }
        asio::async_write(self->client, asio::buffer(self->down.data(), n),
                          [self](const boost::system::error_code& ec2, size_t) {
                            if (ec2) {
                              self->close();
                              return;
                            }
                            self->read_down();
                          });
      });
    }

    void close() {
      if (closed)
        return;
      closed = true;
      boost::system::error_code ignored;
      client.close(ignored);
      node.close(ignored);
      g.buffered -= counted;
      counted = 0;
      --g.open;
      g.links.erase(shared_from_this());
    }
  };

  void accept() {
    auto self = shared_from_this();
    acceptor.async_accept([self](const boost::system::error_code& ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !self->acceptor.is_open())
        return;
      if (!ec) {
        if (self->open.load() >= self->opts.max_connections) {
          self->refused("a connection beyond " + std::to_string(self->opts.max_connections));
          boost::system::error_code ignored;
          s.close(ignored);
        } else {
          ++self->open;
          auto l = std::make_shared<link>(*self, std::move(s));
          self->links.insert(l);
          l->start();
        }
      }
      self->accept();
    });
  }
};

caf_door_guard::caf_door_guard(door_guard_options opts)
  : impl_(std::make_shared<impl>(std::move(opts))) {}

caf_door_guard::~caf_door_guard() {
  stop();
}

caf::expected<uint16_t> caf_door_guard::start() {
  auto& g = *impl_;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(g.opts.host, ec);
  if (ec) {
    // A host name: the first address it resolves to.
    tcp::resolver resolver{g.ioc};
    auto found = resolver.resolve(g.opts.host, std::to_string(g.opts.port), ec);
    if (ec || found.empty())
      return nf::make_error(nf::errc::invalid, "node.host: cannot resolve \"" + g.opts.host
                                                 + "\": " + ec.message());
    address = found.begin()->endpoint().address();
  }
  tcp::endpoint at{address, g.opts.port};
  g.acceptor.open(at.protocol(), ec);
  if (!ec)
    g.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec)
    g.acceptor.bind(at, ec);
  if (!ec)
    g.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return nf::make_error(nf::errc::unavailable, ec.message());
  auto port = g.acceptor.local_endpoint().port();
  g.accept();
  g.thread = std::thread([keep = impl_] { keep->ioc.run(); });
  return port;
}

void caf_door_guard::stop() {
  auto& g = *impl_;
  if (!g.thread.joinable())
    return;
  asio::post(g.ioc, [keep = impl_] {
    boost::system::error_code ignored;
    keep->acceptor.close(ignored);
    auto links = keep->links; // close() erases from the set
    for (const auto& l : links)
      l->close();
  });
  g.thread.join();
}

size_t caf_door_guard::connections() const {
  return impl_->open.load();
}

} // namespace nf::net
