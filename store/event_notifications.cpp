#include "store/event_notifications.hpp"

#include <cerrno>
#include <charconv>

#include <libpq-fe.h>
#include <poll.h>

#include "flow/uuid.hpp"
#include "proto/errors.hpp"

namespace nf::store {

namespace {

// The channel "WorkflowEvents_notify"() sends on. LISTEN takes no parameters and cannot be
// prepared, so it runs as a simple query; the channel is quoted like every identifier here.
constexpr const char* listen_sql = R"(LISTEN "node_flow_workflow_events")";

} // namespace

std::optional<event_notice> parse_event_notice(std::string_view payload) {
  auto colon = payload.rfind(':');
  if (colon == std::string_view::npos)
    return std::nullopt;
  auto id = payload.substr(0, colon);
  auto digits = payload.substr(colon + 1);
  if (!flow::is_uuid(id) || digits.empty())
    return std::nullopt;
  int64_t seq = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (ec != std::errc{} || end != digits.data() + digits.size() || seq < 1)
    return std::nullopt;
  return event_notice{std::string{id}, seq};
}

caf::expected<event_notifications> event_notifications::open(const std::string& dsn) {
  auto c = connection::open(dsn);
  if (!c)
    return std::move(c.error());
  if (auto r = c->exec(listen_sql); !r)
    return std::move(r.error());
  return event_notifications{std::move(*c)};
}

caf::expected<std::vector<std::string>> event_notifications::drain() {
  auto* pg = conn_.native();
  if (PQconsumeInput(pg) == 0 || PQstatus(pg) != CONNECTION_OK)
    return make_error(errc::conn_broken,
                      "the history's LISTEN connection is lost: " + conn_.last_error());
  std::vector<std::string> out;
  while (PGnotify* n = PQnotifies(pg)) {
    out.emplace_back(n->extra ? n->extra : "");
    PQfreemem(n);
  }
  return out;
}

caf::expected<std::vector<std::string>> event_notifications::wait(std::chrono::milliseconds timeout,
                                                                  int wake_fd) {
  // Notifications read along with an earlier answer wait in libpq, not on the socket.
  auto ready = drain();
  if (!ready || !ready->empty())
    return ready;
  pollfd fds[2] = {{PQsocket(conn_.native()), POLLIN, 0}, {wake_fd, POLLIN, 0}};
  int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n < 0 && errno != EINTR)
    return make_error(errc::conn_broken, "the history's LISTEN connection: poll failed");
  if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL))
    return make_error(errc::conn_broken, "the history's LISTEN connection is closed");
  if (n > 0 && (fds[0].revents & POLLIN))
    return drain();
  return std::vector<std::string>{};
}

} // namespace nf::store
