#pragma once

// Who sends an HTTP request: its token (`X-Authorization: <token>`, what Conductor's SDKs
// send, or `Authorization: Bearer <token>`) checked against the cluster's signing secret
// and this node's copy of the API keys and users. The copy is reloaded every `refresh` on a
// thread of its own, so checking a request never waits on the database and a revoked key or
// a disabled user is refused within one refresh on every node. Tokens come from POST
// /api/token (a key) and POST /api/login (a user's name and password); a user's token names
// `user:<userId>` where a key's names the key (engine/auth/credentials.hpp has the format).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "net/api/credentials.hpp"
#include "net/web/exchange.hpp"

namespace nf::net::web {

struct authenticator_options {
  std::string dsn;
  std::chrono::milliseconds refresh{2000}; ///< auth.key_refresh_ms
  int64_t token_ttl_s = 3600;              ///< auth.token_ttl_s
  /// Logins checked or waiting at once; more are refused with 429. Each check holds 64 MiB
  /// for tens of milliseconds on the login thread, so a flood queues a few and no more.
  size_t max_logins_in_flight = 4;
};

/// A check's outcome: status 0 with the principal, or the HTTP status (401) and why.
struct auth_outcome {
  unsigned status = 0;
  std::string message;
  principal who;
};

/// Also the client protocol's checker (net/api/credentials.hpp): both doors accept the same
/// tokens.
class authenticator : public credential_checker {
public:
  explicit authenticator(authenticator_options opts);
  ~authenticator();
  authenticator(const authenticator&) = delete;
  authenticator& operator=(const authenticator&) = delete;

  /// Connects, reads (or makes) the signing secret and loads the keys once, then starts
  /// the refresher; an error when the database cannot give them.
  caf::expected<void> start();
  void stop();

  /// The principal of a request's credentials.
  auth_outcome authenticate(const exchange& ex) const;
  /// The principal of a token.
  auth_outcome authenticate_token(const std::string& token) const;

  // credential_checker (net/api/credentials.hpp), valid once started.
  holder holder_of(const std::string& token) const override;
  bool is_node_credential(const std::string& credential) const override;
  std::string node_credential() const override;
  void session_for_key(std::string key_id, std::string key_secret, login_done done) override;

  /// POST /api/token: a token for a key whose secret matches. A key this node has not
  /// loaded yet (made a moment ago) is looked up again on the refresher's thread before
  /// `done` is called; otherwise `done` runs at once.
  void issue_token(std::string key_id, std::string secret,
                   std::function<void(auth_outcome, std::string token, int64_t expires_s)> done);

  /// POST /api/login: a token for an active user whose password matches, checked on a
  /// thread of its own (argon2id is slow by design). An unknown user, a disabled one and a
  /// wrong password get the same 401, after the same work; 429 when max_logins_in_flight
  /// are already waiting. `done` runs on that thread.
  void login(std::string name, std::string password,
             std::function<void(auth_outcome, std::string token, int64_t expires_s)> done);

private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace nf::net::web
