#include "cmd/serve_command.hpp"

#include <atomic>
#include <csignal>
#include <thread>
#include <sys/resource.h>
#include <unistd.h>
#include <iostream>
#include <optional>
#include <string_view>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/after.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/node/node.hpp"
#include "actors/system_tasks/script_runner.hpp"
#include "net/client/system_config.hpp"
#include "proto/type_ids.hpp"
#include "cmd/serve_config.hpp"
#include "cmd/serve_http.hpp"
#include "net/api/api.hpp"
#include "net/door/caf_door_guard.hpp"
#include "net/web/tls.hpp"
#include "store/db_clock.hpp"
#include "store/schema/capabilities.hpp"
#include "store/pg/dsn.hpp"
#include "store/schema/migrator.hpp"
#include "engine/secrets/keyring.hpp"
#include "proto/errors.hpp"
#include "store/payloads.hpp"
#include "store/workflows.hpp"
#include "net/http/client.hpp"
#include "net/cluster/middleman_peers.hpp"
#include "net/web/authenticator.hpp"

namespace nf::cmd {

namespace {

// Logs go to stderr (stdout carries the `listening` line tests wait for);
// every folder's logger is a clone of this default one.
void setup_logging(const config::values& settings) {
  auto logger = spdlog::stderr_color_mt("nodeflow");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  spdlog::set_level(spdlog::level::from_str(settings.get(config::keys::log_level)));
}

// Capabilities, migrations and the partition count, before anything starts.
bool check_database(const serve_config& cfg) {
  auto conn = store::connection::open(cfg.dsn);
  if (!conn) {
    std::cerr << "nodeflow serve: " << nf::message_of(conn.error()) << "\n";
    return false;
  }
  if (auto caps = store::check_capabilities(*conn); !caps) {
    std::cerr << "nodeflow serve: " << nf::message_of(caps.error()) << "\n";
    return false;
  }
  // The check measured Postgres's clock against ours; ids and timers follow Postgres's
  // (store/db_clock.hpp), but an operator should hear that this host's clock is off.
  if (auto off = db_clock_offset_us(); off > 1000000 || off < -1000000)
    spdlog::warn("clock_offset this host's clock is {} ms {} Postgres's; nodeflow uses "
                 "Postgres's clock for ids and timers",
                 (off < 0 ? -off : off) / 1000, off < 0 ? "ahead of" : "behind");
  store::migrator m;
  if (cfg.migrate) {
    auto applied = m.up(*conn, [](const std::string& line) { spdlog::info("migrate {}", line); });
    if (!applied) {
      std::cerr << "nodeflow serve: migrate: " << nf::message_of(applied.error()) << "\n";
      return false;
    }
  }
  auto states = m.status(*conn);
  if (!states) {
    std::cerr << "nodeflow serve: " << nf::message_of(states.error()) << "\n";
    return false;
  }
  for (const auto& s : *states) {
    if (!s.applied) {
      std::cerr << "nodeflow serve: database is not migrated (" << s.name
                << " is pending): run `nodeflow migrate --dsn "
                << store::redact_secrets(cfg.dsn)
                << "` or pass --migrate\n";
      return false;
    }
    if (!s.checksum_matches) {
      std::cerr << "nodeflow serve: migration " << s.name
                << " was changed after it was applied; the database does not match this build\n";
      return false;
    }
  }
  auto partitions = store::load_partition_count(*conn);
  if (!partitions) {
    std::cerr << "nodeflow serve: " << nf::message_of(partitions.error()) << "\n";
    return false;
  }
  auto configured = cfg.settings.get(config::keys::engine_partitions);
  if (*partitions != configured) {
    std::cerr << "nodeflow serve: engine.partitions: this node is configured for " << configured
              << " partitions but the database's ClusterSettings.partitionCount is "
              << *partitions << "; set --engine.partitions " << *partitions << "\n";
    return false;
  }
  return true;
}

// Blocks until SIGTERM or SIGINT. The signals are blocked in every thread
// (the mask is set before the actor system starts its threads), so only this
// sigwait sees them.
int wait_for_stop_signal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// True once the node runs at least one partition (its status' "running"),
// so a start sent right after the `listening` line finds a decider. Gives up
// after a lease length: a node joining a full cluster may own none until the
// partitions are rebalanced, and still serves everything else meanwhile.
bool wait_for_partitions(caf::scoped_actor& self, const caf::actor& node,
                         std::chrono::milliseconds patience) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < deadline) {
    bool running = false;
    self->request(node, std::chrono::seconds(1), status_atom_v)
      .receive(
        [&](const std::string& status) {
          boost::json::error_code ec;
          auto v = boost::json::parse(status, ec);
          const auto* o = ec ? nullptr : v.if_object();
          const auto* parts = o ? o->if_contains("running") : nullptr;
          running = parts != nullptr && parts->is_array() && !parts->as_array().empty();
        },
        [](caf::error&) {});
    if (running)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Waits for the node to stop: after `stopping` (at most node_stop_timeout), or
// on its own, which raises SIGTERM so the main thread's sigwait returns.
constexpr auto node_stop_timeout = std::chrono::seconds(15);

void watch_node(caf::scoped_actor& self, std::atomic<bool>& died, std::atomic<bool>& stopping) {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  for (bool done = false; !done;) {
    self->receive(
      [&](caf::down_msg& dm) {
        done = true;
        if (!stopping && dm.reason != caf::exit_reason::user_shutdown) {
          died = true;
          spdlog::error("node_stopped_unexpectedly reason={}", caf::to_string(dm.reason));
          kill(getpid(), SIGTERM);
        }
      },
      caf::after(std::chrono::milliseconds(200)) >> [&] {
        if (!stopping)
          return;
        auto now = std::chrono::steady_clock::now();
        if (!deadline) {
          deadline = now + node_stop_timeout;
        } else if (now > *deadline) {
          spdlog::warn("node_stop_timeout seconds={}", node_stop_timeout.count());
          done = true;
        }
      });
  }
}

// Every parked poll, history stream and client connection holds a descriptor; the node's own
// caps (api.max_open_polls, http.max_event_streams, …) are what bound them, not the soft
// limit a shell happens to start it with: raise it to the hard one.
void raise_open_files_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max)
    return;
  auto was = lim.rlim_cur;
  lim.rlim_cur = lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &lim) == 0)
    spdlog::info("open_files_limit raised from={} to={}", was, lim.rlim_cur);
}

} // namespace

int run_serve_command(int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (std::string_view{argv[i]} == "--help" || std::string_view{argv[i]} == "-h") {
      std::cout << serve_usage();
      return 0;
    }
  std::vector<std::string> errors;
  auto cfg = load_serve_config(argc, argv, errors);
  if (!cfg) {
    for (const auto& e : errors)
      std::cerr << "nodeflow serve: " << e << "\n";
    std::cerr << serve_usage();
    return 2;
  }
  setup_logging(cfg->settings);
  raise_open_files_limit();
  // Every writer of inputs and outputs in this process places them by it (store/payloads.hpp).
  store::set_inline_max_bytes(cfg->settings.get(config::keys::payloads_inline_max_bytes));
  // Every database connection of this process guards its link by these (store/pg/link_settings.hpp).
  store::set_link_defaults(link_settings_of(cfg->settings));
  if (!cfg->settings.get(config::keys::auth_enabled))
    spdlog::warn("AUTH_OFF: the HTTP API checks no credentials; every request is the admin "
                 "of the default namespace (loopback only; never do this where others reach "
                 "the node)");
  // A key file that cannot be read would fail every HTTP task naming a secret: refuse to
  // start instead.
  if (const auto& key_file = cfg->settings.get(config::keys::secrets_master_key_file);
      !key_file.empty()) {
    auto ring = engine::secrets::keyring::load(
      key_file, cfg->settings.get(config::keys::secrets_previous_key_files));
    if (!ring) {
      std::cerr << "nodeflow serve: " << nf::message_of(ring.error()) << "\n";
      return 2;
    }
  }
  // A certificate or key that cannot serve would fail every handshake: refuse to start.
  std::shared_ptr<boost::asio::ssl::context> tls;
  if (const auto& cert = cfg->settings.get(config::keys::http_tls_cert_file); !cert.empty()) {
    auto ctx = net::web::load_tls_context(cert, cfg->settings.get(config::keys::http_tls_key_file));
    if (!ctx) {
      std::cerr << "nodeflow serve: " << nf::message_of(ctx.error()) << "\n";
      return 2;
    }
    tls = std::move(*ctx);
  }
  if (!check_database(*cfg))
    return 1;

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  net::system_config caf_cfg;
  if (cfg->cluster_tls)
    net::use_cluster_tls(caf_cfg, *cfg->cluster_tls);
  // Declared before the actor system so it outlives it: an answer arriving on a CAF thread
  // during shutdown still finds the server's (stopped) io_context.
  std::unique_ptr<http_door> http;
  caf::actor_system sys{caf_cfg};
  const auto& settings = cfg->settings;
  // The api is published first (its port may be 0 = any), then the node is
  // spawned knowing the address it is reachable at, then handed to the api.
  // One checker for both doors, started before either listens (nothing is served unchecked).
  std::shared_ptr<net::web::authenticator> auth;
  if (settings.get(config::keys::auth_enabled)) {
    net::web::authenticator_options ao;
    ao.dsn = cfg->dsn;
    ao.refresh = std::chrono::milliseconds{settings.get(config::keys::auth_key_refresh_ms)};
    ao.token_ttl_s = settings.get(config::keys::auth_token_ttl_s);
    auth = std::make_shared<net::web::authenticator>(ao);
    if (auto ok = auth->start(); !ok) {
      std::cerr << "nodeflow serve: cannot load the API keys: " << nf::message_of(ok.error())
                << "\n";
      return 1;
    }
  }
  auto api_opts = net::make_api_options(settings, cfg->dsn, nullptr);
  api_opts.auth = auth;
  auto api = net::spawn_api(sys, std::move(api_opts));
  const auto& host = settings.get(config::keys::node_host);
  auto port = static_cast<uint16_t>(settings.get(config::keys::node_port));
  // Behind the guard (net/door/caf_door_guard.hpp) CAF listens on a free loopback port and
  // the guard on node.host:node.port; `bound` is the port clients and peers reach.
  const bool guarded = settings.get(config::keys::node_door_guard);
  auto caf_bound = guarded ? sys.middleman().publish(api, 0, "127.0.0.1", true)
                           : sys.middleman().publish(api, port, host.c_str(), true);
  if (!caf_bound) {
    std::cerr << "nodeflow serve: cannot listen on " << host << ":" << port << ": "
              << caf::to_string(caf_bound.error()) << "\n";
    caf::anon_send_exit(api, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::unique_ptr<net::caf_door_guard> guard, cluster_guard;
  auto bound = caf_bound;
  net::door_guard_options go;
  go.host = host;
  go.max_connections = static_cast<size_t>(settings.get(config::keys::node_max_connections));
  go.max_message_bytes = static_cast<uint64_t>(settings.get(config::keys::node_max_message_bytes));
  go.max_buffered_bytes = static_cast<uint64_t>(settings.get(config::keys::node_max_buffered_bytes));
  if (guarded) {
    go.port = port;
    go.target_port = *caf_bound;
    guard = std::make_unique<net::caf_door_guard>(go);
    bound = guard->start();
    if (!bound) {
      std::cerr << "nodeflow serve: cannot listen on " << host << ":" << port << ": "
                << nf::message_of(bound.error()) << "\n";
      sys.middleman().unpublish(api, *caf_bound);
      caf::anon_send_exit(api, caf::exit_reason::user_shutdown);
      return 1;
    }
  }
  // With cluster TLS peers reach the api through a door of their own that takes only a
  // certificate of the cluster CA; clients keep the plain one.
  // Behind a guard of its own too, which bounds its connections (it cannot read their frames).
  std::optional<uint16_t> cluster_bound, cluster_caf_bound;
  if (cfg->cluster_tls) {
    auto wanted = settings.get(config::keys::cluster_port);
    auto tls_port = guarded ? net::open_cluster_door(api, "127.0.0.1", 0)
                            : net::open_cluster_door(api, host, wanted);
    caf::expected<uint16_t> outer = tls_port;
    if (tls_port && guarded) {
      go.port = wanted > 0 ? static_cast<uint16_t>(wanted) : 0;
      go.target_port = *tls_port;
      go.whole_frames = false;
      go.name = "cluster_door";
      cluster_guard = std::make_unique<net::caf_door_guard>(go);
      outer = cluster_guard->start();
    }
    if (!tls_port || !outer) {
      std::cerr << "nodeflow serve: cluster.port: cannot listen on " << host << ":" << wanted
                << ": "
                << (tls_port ? nf::message_of(outer.error()) : caf::to_string(tls_port.error()))
                << "\n";
      if (tls_port)
        net::close_cluster_door(sys, api, *tls_port);
      sys.middleman().unpublish(api, *caf_bound);
      caf::anon_send_exit(api, caf::exit_reason::user_shutdown);
      return 1;
    }
    cluster_caf_bound = *tls_port;
    cluster_bound = *outer;
  }
  // Unpublishes the api's doors and stops it: every way out once they are open.
  auto close_doors = [&] {
    sys.middleman().unpublish(api, *caf_bound);
    if (cluster_caf_bound)
      net::close_cluster_door(sys, api, *cluster_caf_bound);
    caf::anon_send_exit(api, caf::exit_reason::user_shutdown);
  };
  // The HTTP port is taken before the node joins the cluster: a node that cannot serve HTTP
  // exits without having taken partitions from the others.
  http = std::make_unique<http_door>(sys, settings, api, cfg->dsn, auth, tls);
  if (http->enabled()) {
    if (auto bound_http = http->bind(); !bound_http) {
      std::cerr << "nodeflow serve: " << nf::message_of(bound_http.error()) << "\n";
      close_doors();
      return 1;
    }
  }
  actors::node_options node_opts;
  node_opts.dsn = cfg->dsn;
  node_opts.settings = settings;
  node_opts.http = std::make_shared<http::beast_client>(cfg->egress);
  node_opts.scripts = actors::make_script_pool(settings);
  if (auth)
    node_opts.peer_credential = auth->node_credential();
  node_opts.advertise = !settings.get(config::keys::node_advertise).empty()
                          ? settings.get(config::keys::node_advertise)
                          : host + ":" + std::to_string(cluster_bound ? *cluster_bound : *bound);
  node_opts.peers = std::make_shared<net::middleman_peers>(
    cluster_bound.has_value(), node_opts.advertise, caf::actor_cast<caf::actor>(api),
    node_opts.peer_credential);
  auto node = actors::spawn_node(sys, node_opts);
  net::attach_node(api, node);
  caf::scoped_actor self{sys};
  auto patience =
    std::chrono::milliseconds{settings.get(config::keys::membership_lease_ms) + 2000};
  if (!wait_for_partitions(self, node, patience))
    spdlog::warn("node_owns_no_partition_yet waited_ms={} (starts answer unavailable until it "
                 "owns one)",
                 patience.count());
  self->monitor(node);
  if (http->enabled()) {
    auto http_port = http->start();
    if (!http_port) {
      std::cerr << "nodeflow serve: " << nf::message_of(http_port.error()) << "\n";
      close_doors();
      caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
      return 1;
    }
    spdlog::info("http_listening host={} port={} tls={}", settings.get(config::keys::http_host),
                 *http_port, tls ? "on" : "off");
    std::cout << "http " << settings.get(config::keys::http_host) << ":" << *http_port
              << std::endl;
  }
  if (cluster_bound) {
    spdlog::info("cluster_listening host={} port={} tls=mutual", host, *cluster_bound);
    std::cout << "cluster " << host << ":" << *cluster_bound << std::endl;
  }
  spdlog::info("node_listening host={} port={} advertise={}", host, *bound, node_opts.advertise);
  std::cout << "listening " << host << ":" << *bound << std::endl;

  // Runs until a stop signal, or until the node stops on its own (e.g. the
  // database refused it): then exit 1 with its reason.
  std::atomic<bool> node_died{false};
  std::atomic<bool> stopping{false};
  std::thread watcher([&] { watch_node(self, node_died, stopping); });
  int sig = wait_for_stop_signal(stop_signals);
  stopping = true;
  if (!node_died)
    spdlog::info("node_stopping signal={}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  // Stop taking requests, then stop the node: it stops its partitions and
  // membership releases their leases so another node can take them at once.
  http->stop();
  if (guard)
    guard->stop();
  if (cluster_guard)
    cluster_guard->stop();
  close_doors();
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  watcher.join();
  spdlog::info("node_stopped");
  return node_died ? 1 : 0;
}

} // namespace nf::cmd
