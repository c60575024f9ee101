#pragma once

#include <optional>
#include <string>
#include <utility>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"
#include "proto/errors.hpp"

namespace nf::store {

/// The connection a long-lived owner (a detached actor) keeps: opened on first
/// use and reopened after the link broke, so a database restart costs the
/// owner one failed round, not its life.
class session {
public:
  /// Run on each new connection before it is handed out (session settings).
  using setup_fn = caf::expected<void> (*)(connection&);

  explicit session(std::string dsn, setup_fn setup = nullptr)
    : dsn_(std::move(dsn)), setup_(setup) {}

  /// The open connection, (re)connecting when there is none; the error says
  /// why connecting failed.
  caf::expected<connection*> get() {
    if (conn_ && !conn_->ok())
      conn_.reset();
    if (!conn_) {
      auto c = connection::open(dsn_);
      if (!c)
        return std::move(c.error());
      if (setup_)
        if (auto s = setup_(*c); !s)
          return std::move(s.error());
      conn_.emplace(std::move(*c));
    }
    return &*conn_;
  }

  /// Call with every failed store result: drops a connection whose link is
  /// gone (or whose state is unknown) so the next `get` reconnects.
  void on_error(const caf::error& err) {
    auto code = code_of(err);
    if (code == errc::conn_broken || code == errc::in_doubt || (conn_ && !conn_->ok()))
      conn_.reset();
  }

private:
  std::string dsn_;
  setup_fn setup_;
  std::optional<connection> conn_;
};

} // namespace nf::store
