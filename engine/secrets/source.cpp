#include "engine/secrets/source.hpp"

#include "engine/secrets/sealing.hpp"
#include "proto/errors.hpp"
#include "store/secrets.hpp"

namespace nf::engine::secrets {

source::source(std::string dsn, caf::expected<keyring> ring)
  : dsn_(std::move(dsn)), ring_(std::move(ring)) {
}

caf::expected<std::string> source::value(const namespace_id& ns, const std::string& name) {
  if (!ring_)
    return nf::make_error(nf::errc::invalid, "secret " + name + ": cannot be unsealed: "
                                               + nf::message_of(ring_.error()));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!conn_ || !conn_->ok()) {
    conn_.reset();
    auto c = store::connection::open(dsn_);
    if (!c)
      return nf::make_error(nf::errc::unavailable,
                            "secret " + name + ": database unavailable: "
                              + nf::message_of(c.error()));
    conn_.emplace(std::move(*c));
  }
  auto s = store::read_secret(*conn_, ns, name);
  if (!s)
    return std::move(s.error());
  if (!*s)
    return nf::make_error(nf::errc::not_found, "secret " + name + " is not defined (nodeflow "
                                                 "secrets put " + name + ")");
  return unseal(*ring_, **s);
}

} // namespace nf::engine::secrets
