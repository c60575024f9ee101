#include "net/web/authenticator.hpp"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <sodium.h>

#include "config/folder_logger.hpp"
#include "engine/auth/credentials.hpp"
#include "proto/errors.hpp"
#include "store/api_keys.hpp"

namespace nf::net::web {

namespace {

// One name for now: rotating it would add a second and accept both for a token's life.
constexpr const char* signing_secret_name = "http-tokens";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

std::string credentials_of(const exchange& ex) {
  auto x = ex.header("x-authorization");
  if (!x.empty())
    return x;
  auto a = ex.header("authorization");
  constexpr std::string_view bearer = "Bearer ";
  if (a.size() > bearer.size() && std::equal(bearer.begin(), bearer.end(), a.begin(),
                                             [](char l, char r) {
                                               return std::tolower(static_cast<unsigned char>(l))
                                                      == std::tolower(static_cast<unsigned char>(r));
                                             }))
    return a.substr(bearer.size());
  return {};
}

} // namespace

using key_map = std::map<std::string, store::usable_api_key>;
using token_callback = std::function<void(auth_outcome, std::string, int64_t)>;

struct authenticator::impl {
  authenticator_options opts;
  std::string signing_secret;
  std::string node_credential;
  std::optional<store::connection> conn;

  mutable std::mutex mutex;
  std::condition_variable wake;
  std::shared_ptr<const key_map> keys = std::make_shared<key_map>();
  struct pending_token {
    std::string key_id, secret;
    token_callback done;
  };
  std::vector<pending_token> pending;
  bool stopping = false;
  std::thread thread;

  std::shared_ptr<const key_map> snapshot() const {
    std::lock_guard lock{mutex};
    return keys;
  }

  caf::expected<void> reload() {
    if (!conn) {
      auto c = store::connection::open(opts.dsn);
      if (!c)
        return c.error();
      conn.emplace(std::move(*c));
    }
    auto rows = store::usable_api_keys(*conn);
    if (!rows) {
      conn.reset(); // opened again on the next round
      return rows.error();
    }
    auto fresh = std::make_shared<key_map>();
    for (auto& k : *rows)
      fresh->emplace(k.id, std::move(k));
    std::lock_guard lock{mutex};
    keys = std::move(fresh);
    return {};
  }

  void answer_token(const key_map& ks, const std::string& key_id, const std::string& secret,
                    const token_callback& done) const {
    auto it = ks.find(key_id);
    if (it == ks.end() || !engine::auth::secret_matches(secret, it->second.secret_hash_hex)) {
      done({401, "keyId/keySecret: no such key, or it is revoked, or the secret does not match",
            {}},
           {}, 0);
      return;
    }
    auto now = now_ms();
    if (it->second.expires_at_ms && *it->second.expires_at_ms <= now) {
      done({401, "keyId: the key has expired", {}}, {}, 0);
      return;
    }
    // A token never outlives its key.
    int64_t expires = now / 1000 + opts.token_ttl_s;
    if (it->second.expires_at_ms)
      expires = std::min(expires, *it->second.expires_at_ms / 1000);
    const auto& k = it->second;
    done({0, {}, principal{"key:" + k.id, k.role, k.namespace_name}},
         engine::auth::sign_token(signing_secret, key_id, expires), expires);
  }

  void run() {
    auto log = folder_logger("net");
    std::unique_lock lock{mutex};
    while (!stopping) {
      wake.wait_for(lock, opts.refresh, [&] { return stopping || !pending.empty(); });
      if (stopping)
        break;
      auto waiting = std::move(pending);
      pending.clear();
      lock.unlock();
      if (auto ok = reload(); !ok)
        log->warn("api_keys_reload_failed error={}", message_of(ok.error()));
      auto ks = snapshot();
      for (const auto& p : waiting)
        answer_token(*ks, p.key_id, p.secret, p.done);
      lock.lock();
    }
  }
};

authenticator::authenticator(authenticator_options opts) : impl_(std::make_shared<impl>()) {
  impl_->opts = std::move(opts);
}

authenticator::~authenticator() {
  stop();
}

caf::expected<void> authenticator::start() {
  auto c = store::connection::open(impl_->opts.dsn);
  if (!c)
    return c.error();
  auto secret = store::signing_secret(*c, signing_secret_name, engine::auth::new_secret_hex());
  if (!secret)
    return secret.error();
  impl_->signing_secret = *secret;
  impl_->node_credential = engine::auth::node_credential(*secret);
  impl_->conn.emplace(std::move(*c));
  if (auto ok = impl_->reload(); !ok)
    return ok.error();
  impl_->thread = std::thread([i = impl_] { i->run(); });
  return {};
}

void authenticator::stop() {
  {
    std::lock_guard lock{impl_->mutex};
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable())
    impl_->thread.join();
  // Requests still waiting for a reload are refused rather than left unanswered.
  for (const auto& p : impl_->pending)
    p.done({503, "the node is stopping", {}}, {}, 0);
  impl_->pending.clear();
}

auth_outcome authenticator::authenticate(const exchange& ex) const {
  auto token = credentials_of(ex);
  if (token.empty())
    return {401, "no credentials: send X-Authorization: <token> (or Authorization: Bearer "
                 "<token>); POST /api/token exchanges a key for one",
            {}};
  return authenticate_token(token);
}

auth_outcome authenticator::authenticate_token(const std::string& token) const {
  if (token.empty())
    return {401, "no credential: log in with an API key first (NODEFLOW_KEY_ID and "
                 "NODEFLOW_KEY_SECRET for nodeflow's commands)",
            {}};
  auto claims = engine::auth::check_token(impl_->signing_secret, token);
  if (!claims)
    return {401, "the token is not valid", {}};
  auto now = now_ms();
  if (claims->expires_unix_s * 1000 <= now)
    return {401, "the token has expired: ask POST /api/token for another", {}};
  auto ks = impl_->snapshot();
  auto it = ks->find(claims->key_id);
  if (it == ks->end())
    return {401, "the token's key is revoked or unknown", {}};
  if (it->second.expires_at_ms && *it->second.expires_at_ms <= now)
    return {401, "the token's key has expired", {}};
  return {0, {}, principal{"key:" + it->second.id, it->second.role, it->second.namespace_name}};
}

holder authenticator::holder_of(const std::string& token) const {
  auto o = authenticate_token(token);
  return {o.status == 0, o.message, o.who.subject, o.who.role, o.who.namespace_name};
}

bool authenticator::is_node_credential(const std::string& credential) const {
  const auto& mine = impl_->node_credential;
  return !mine.empty() && credential.size() == mine.size()
         && sodium_memcmp(credential.data(), mine.data(), mine.size()) == 0;
}

std::string authenticator::node_credential() const {
  return impl_->node_credential;
}

void authenticator::login(std::string key_id, std::string key_secret, login_done done) {
  issue_token(std::move(key_id), std::move(key_secret),
              [done = std::move(done)](auth_outcome o, std::string token, int64_t expires) {
                done({o.status == 0, o.message, o.who.subject, o.who.role, o.who.namespace_name},
                     std::move(token), expires);
              });
}

void authenticator::issue_token(std::string key_id, std::string secret, token_callback done) {
  auto ks = impl_->snapshot();
  if (ks->count(key_id)) {
    impl_->answer_token(*ks, key_id, secret, done);
    return;
  }
  {
    std::lock_guard lock{impl_->mutex};
    if (!impl_->stopping) {
      impl_->pending.push_back({std::move(key_id), std::move(secret), std::move(done)});
      impl_->wake.notify_all();
      return;
    }
  }
  done({503, "the node is stopping", {}}, {}, 0);
}

} // namespace nf::net::web
