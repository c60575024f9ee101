#include "cmd/serve_http.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string_view>

#include "net/web/authenticator.hpp"
#include "net/web/event_hub.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "net/web/gateway.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/series_sampler.hpp"
#include "net/web/server.hpp"
#include "net/web/ui_files.hpp"
#include "proto/errors.hpp"

namespace nf::cmd {

struct http_door::impl {
  std::optional<net::web::gateway> gateway;
  std::unique_ptr<net::web::event_hub> events;
  std::shared_ptr<net::web::authenticator> auth;
  std::unique_ptr<net::web::server> server;
  std::string ui_dir;
  std::unique_ptr<net::web::series_sampler> series;
};

http_door::http_door(caf::actor_system& sys, const config::values& settings, client_api api,
                     const std::string& dsn, std::shared_ptr<net::web::authenticator> auth,
                     std::shared_ptr<boost::asio::ssl::context> tls)
  : impl_(std::make_unique<impl>()) {
  auto port = settings.get(config::keys::http_port);
  if (port == 0)
    return;
  auto timeout = std::chrono::milliseconds{settings.get(config::keys::client_timeout_ms)};
  impl_->gateway.emplace(sys, std::move(api), timeout);
  net::web::event_hub_options hub;
  hub.dsn = dsn;
  hub.max_streams = static_cast<size_t>(settings.get(config::keys::http_max_event_streams));
  hub.ping_interval = std::chrono::seconds{settings.get(config::keys::http_event_stream_ping_s)};
  impl_->events = std::make_unique<net::web::event_hub>(hub);
  impl_->auth = std::move(auth);
  net::web::route_context ctx;
  ctx.auth = impl_->auth.get();
  ctx.api = &*impl_->gateway;
  ctx.events = impl_->events.get();
  impl_->series = std::make_unique<net::web::series_sampler>();
  ctx.series = impl_->series.get();
  ctx.json.max_depth = static_cast<size_t>(settings.get(config::keys::http_max_json_depth));
  ctx.max_poll_timeout_ms = settings.get(config::keys::lessor_max_poll_timeout_ms);
  net::web::server_options opts;
  opts.host = settings.get(config::keys::http_host);
  opts.port = port < 0 ? 0 : static_cast<uint16_t>(port);
  opts.threads = static_cast<int>(settings.get(config::keys::http_threads));
  opts.max_body_bytes = static_cast<size_t>(settings.get(config::keys::http_max_body_bytes));
  opts.max_inflight = static_cast<size_t>(settings.get(config::keys::http_max_inflight));
  opts.idle_timeout = std::chrono::seconds{settings.get(config::keys::http_idle_timeout_s)};
  opts.max_stream_buffer_bytes =
    static_cast<size_t>(settings.get(config::keys::http_max_stream_buffer_bytes));
  opts.auth = impl_->auth;
  opts.tls = std::move(tls);
  impl_->ui_dir = settings.get(config::keys::http_ui_dir);
  opts.ui = std::make_shared<const net::web::ui_files>(impl_->ui_dir);
  opts.on_answer = [](const std::string& route, net::web::verb method, unsigned status,
                      double seconds) {
    // By the route's pattern, never its path: ids in paths would make a series per request.
    const auto& m = engine::metrics::node_metrics();
    std::string_view pattern = route.empty() ? std::string_view{"unmatched"} : route;
    auto name = boost::beast::http::to_string(method);
    std::string_view method_name{name.data(), name.size()};
    char code[4];
    std::snprintf(code, sizeof code, "%03u", status % 1000);
    m.http_requests.with({pattern, method_name, code}).inc();
    m.http_request_seconds.with({pattern, method_name}).observe(seconds);
  };
  impl_->server = std::make_unique<net::web::server>(net::web::make_routes(ctx), opts);
}

http_door::~http_door() {
  stop();
}

bool http_door::enabled() const {
  return impl_->server != nullptr;
}

caf::expected<uint16_t> http_door::bind() {
  if (const auto& dir = impl_->ui_dir;
      !dir.empty() && !std::filesystem::is_regular_file(std::filesystem::path{dir} / "index.html"))
    return make_error(errc::invalid,
                      "http.ui_dir: " + dir + " holds no index.html (a folder like ui/ is expected)");
  return impl_->server->bind();
}

caf::expected<uint16_t> http_door::start() {
  if (auto bound = bind(); !bound)
    return bound;
  impl_->events->start();
  impl_->series->start();
  return impl_->server->start();
}

// The server first: its connections closing tell the hub their streams went away.
void http_door::stop() {
  if (impl_->server)
    impl_->server->stop();
  if (impl_->events)
    impl_->events->stop();
  if (impl_->series)
    impl_->series->stop();
}

} // namespace nf::cmd
