#pragma once

// What the client protocol's door asks of whoever checks credentials (the node's
// authenticator, net/web/authenticator.hpp, behind both doors): a token's holder, the
// cluster's node credential, and a session for an API key. Without one (`--auth off`)
// the api takes requests as they come.

#include <cstdint>
#include <functional>
#include <string>

namespace nf::net {

struct holder {
  bool ok = false;
  std::string refusal;  ///< why not, when !ok
  std::string subject;  ///< "key:<id>", "user:<name>"
  std::string role;     ///< admin, operator, worker, reader
  std::string namespace_name;
};

class credential_checker {
public:
  virtual ~credential_checker() = default;

  /// Who holds `token`; never waits on the database.
  virtual holder holder_of(const std::string& token) const = 0;

  /// Whether `credential` is the cluster's node credential (between nodes only).
  virtual bool is_node_credential(const std::string& credential) const = 0;
  /// This cluster's node credential, for the requests a node forwards.
  virtual std::string node_credential() const = 0;

  /// A token for an API key whose secret matches, or the refusal; `done` may run on
  /// another thread.
  using login_done = std::function<void(holder, std::string token, int64_t expires_at_s)>;
  virtual void session_for_key(std::string key_id, std::string key_secret, login_done done) = 0;
};

} // namespace nf::net
