#include "net/web/authenticator.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <sodium.h>

#include "config/folder_logger.hpp"
#include "engine/auth/credentials.hpp"
#include "engine/auth/passwords.hpp"
#include "flow/ascii.hpp"
#include "store/db_clock.hpp" // token and lease times are Postgres's, whichever node stamped them
#include "proto/errors.hpp"
#include "store/api_keys.hpp"
#include "store/users.hpp"

namespace nf::net::web {

namespace {

// A user's token carries this before the user's id where a key's carries the key id.
constexpr std::string_view user_claim = "user:";

// One message for an unknown user, a disabled one and a wrong password: which of them it
// was is not the caller's to learn.
constexpr const char* bad_login = "username/password: the name or the password is wrong";

// One name for now: rotating it would add a second and accept both for a token's life.
constexpr const char* signing_secret_name = "http-tokens";


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
using user_map = std::map<std::string, store::active_user>; // by id
using token_callback = std::function<void(auth_outcome, std::string, int64_t)>;

struct authenticator::impl {
  authenticator_options opts;
  std::string signing_secret;
  std::string node_credential;
  std::optional<store::connection> conn;

  mutable std::mutex mutex;
  std::condition_variable wake;
  std::shared_ptr<const key_map> keys = std::make_shared<key_map>();
  std::shared_ptr<const user_map> users = std::make_shared<user_map>();
  struct pending_token {
    std::string key_id, secret;
    token_callback done;
  };
  std::vector<pending_token> pending;
  bool stopping = false;
  std::thread thread;

  // The login thread: its own queue, connection and a hash to check against when there is
  // no such user, so that answer costs what a wrong password costs.
  struct pending_login {
    std::string name, password;
    token_callback done;
  };
  std::deque<pending_login> logins;
  size_t logins_in_flight = 0; // queued or being checked
  std::condition_variable login_wake;
  std::optional<store::connection> login_conn;
  std::string dummy_hash;
  std::thread login_thread;

  std::shared_ptr<const key_map> snapshot() const {
    std::lock_guard lock{mutex};
    return keys;
  }

  std::shared_ptr<const user_map> users_snapshot() const {
    std::lock_guard lock{mutex};
    return users;
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
    auto people = store::active_users(*conn);
    if (!people) {
      conn.reset();
      return people.error();
    }
    auto fresh = std::make_shared<key_map>();
    for (auto& k : *rows)
      fresh->emplace(k.id, std::move(k));
    auto fresh_users = std::make_shared<user_map>();
    for (auto& u : *people)
      fresh_users->emplace(u.id, std::move(u));
    std::lock_guard lock{mutex};
    keys = std::move(fresh);
    users = std::move(fresh_users);
    return {};
  }

  // A user who logged in before this node's next reload has a token already good here.
  void remember(const store::active_user& u) {
    std::lock_guard lock{mutex};
    if (users->count(u.id))
      return;
    auto more = std::make_shared<user_map>(*users);
    more->emplace(u.id, u);
    users = std::move(more);
  }

  caf::expected<std::optional<store::user_credentials>>
  credentials_of_user(const std::string& name) {
    if (!login_conn) {
      auto c = store::connection::open(opts.dsn);
      if (!c)
        return c.error();
      login_conn.emplace(std::move(*c));
    }
    auto row = store::user_credentials_of(*login_conn, name);
    if (!row)
      login_conn.reset(); // opened again by the next login
    return row;
  }

  void answer_login(pending_login& p) {
    auto name = flow::ascii_lower(p.name);
    std::optional<store::user_credentials> found;
    if (!engine::auth::user_name_problem(name)) {
      auto row = credentials_of_user(name);
      if (!row) {
        folder_logger("net")->warn("user_login_lookup_failed error={}", message_of(row.error()));
        p.done({503, "the users cannot be read now: try again in a moment", {}}, {}, 0);
        return;
      }
      found = std::move(*row);
    }
    bool ok = engine::auth::password_matches(p.password, found ? found->password_hash
                                                                : dummy_hash);
    engine::auth::wipe_password(p.password);
    if (!ok || !found) {
      p.done({401, bad_login, {}}, {}, 0);
      return;
    }
    remember(found->user);
    int64_t expires = db_clock_now_ms() / 1000 + opts.token_ttl_s;
    p.done({}, engine::auth::sign_token(signing_secret, std::string{user_claim} + found->user.id,
                                        expires),
           expires);
  }

  void run_logins() {
    // Made here, not in start(): hashing takes tens of milliseconds the node's start need
    // not wait for. Its password is random and thrown away, so nothing ever matches it.
    try {
      dummy_hash = engine::auth::hash_password(engine::auth::new_secret_hex());
    } catch (const std::exception& e) {
      folder_logger("net")->warn("user_login_dummy_hash_failed error={}", e.what());
    }
    std::unique_lock lock{mutex};
    while (true) {
      login_wake.wait(lock, [&] { return stopping || !logins.empty(); });
      if (stopping)
        break;
      auto next = std::move(logins.front());
      logins.pop_front();
      lock.unlock();
      answer_login(next);
      lock.lock();
      --logins_in_flight;
    }
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
    auto now = db_clock_now_ms();
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
  impl_->login_thread = std::thread([i = impl_] { i->run_logins(); });
  return {};
}

void authenticator::stop() {
  {
    std::lock_guard lock{impl_->mutex};
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->login_wake.notify_all();
  if (impl_->thread.joinable())
    impl_->thread.join();
  if (impl_->login_thread.joinable())
    impl_->login_thread.join();
  for (auto& p : impl_->logins)
    p.done({503, "the node is stopping", {}}, {}, 0);
  impl_->logins.clear();
  // Requests still waiting for a reload are refused rather than left unanswered.
  for (const auto& p : impl_->pending)
    p.done({503, "the node is stopping", {}}, {}, 0);
  impl_->pending.clear();
}

auth_outcome authenticator::authenticate(const exchange& ex) const {
  auto token = credentials_of(ex);
  if (token.empty())
    return {401, "no credentials: send X-Authorization: <token> (or Authorization: Bearer "
                 "<token>); POST /api/token exchanges a key for one, POST /api/login a user's "
                 "password",
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
  auto now = db_clock_now_ms();
  if (claims->expires_unix_s * 1000 <= now)
    return {401, "the token has expired: ask POST /api/token (or /api/login) for another", {}};
  if (claims->key_id.compare(0, user_claim.size(), user_claim) == 0) {
    auto us = impl_->users_snapshot();
    auto u = us->find(claims->key_id.substr(user_claim.size()));
    if (u == us->end())
      return {401, "the token's user is disabled or unknown", {}};
    return {0, {}, principal{"user:" + u->second.name, u->second.role, u->second.namespace_name}};
  }
  auto ks = impl_->snapshot();
  auto it = ks->find(claims->key_id);
  if (it == ks->end())
    return {401, "the token's key is revoked or unknown", {}};
  if (it->second.expires_at_ms && *it->second.expires_at_ms <= now)
    return {401, "the token's key has expired", {}};
  return {0, {}, principal{"key:" + it->second.id, it->second.role, it->second.namespace_name}};
}

namespace {

// An outcome as the client protocol's door sees it (net/api/credentials.hpp).
holder holder_of_outcome(const auth_outcome& o) {
  return {o.status == 0, o.message, o.who.subject, o.who.role, o.who.namespace_name};
}

} // namespace

holder authenticator::holder_of(const std::string& token) const {
  return holder_of_outcome(authenticate_token(token));
}

bool authenticator::is_node_credential(const std::string& credential) const {
  const auto& mine = impl_->node_credential;
  return !mine.empty() && credential.size() == mine.size()
         && sodium_memcmp(credential.data(), mine.data(), mine.size()) == 0;
}

std::string authenticator::node_credential() const {
  return impl_->node_credential;
}

void authenticator::session_for_key(std::string key_id, std::string key_secret,
                                    login_done done) {
  issue_token(std::move(key_id), std::move(key_secret),
              [done = std::move(done)](auth_outcome o, std::string token, int64_t expires) {
                done(holder_of_outcome(o), std::move(token), expires);
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

void authenticator::login(std::string name, std::string password, token_callback done) {
  auth_outcome refused;
  {
    std::lock_guard lock{impl_->mutex};
    if (impl_->stopping) {
      refused = {503, "the node is stopping", {}};
    } else if (impl_->logins_in_flight >= impl_->opts.max_logins_in_flight) {
      refused = {429, "too many logins in flight on this node: try again in a moment", {}};
    } else {
      ++impl_->logins_in_flight;
      impl_->logins.push_back({std::move(name), std::move(password), std::move(done)});
      impl_->login_wake.notify_one();
      return;
    }
  }
  engine::auth::wipe_password(password);
  done(refused, {}, 0);
}

} // namespace nf::net::web
