#pragma once

// The HTTP door's users ("Users", docs/schema.md): a name, a password hash made by
// engine/auth/passwords.hpp (never the password), a role and a namespace. A user is
// disabled, never deleted.

#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

struct new_user {
  std::string name;
  std::string password_hash;
  std::string role;           ///< admin, operator, worker or reader
  std::string namespace_name; ///< must name a row of "Namespaces"
};

/// Inserts a user and answers its id; `invalid` naming the field when the role or the
/// namespace is unknown, `conflict` when the name is taken.
caf::expected<std::string> insert_user(connection& conn, const new_user& u);

struct user_row {
  std::string id;
  std::string name;
  std::string role;
  std::string namespace_name;
  std::string created_at; ///< ISO 8601
  std::optional<std::string> disabled_at;
};

/// Every user, oldest first, without the password hash.
caf::expected<std::vector<user_row>> list_users(connection& conn);

/// Disables a user (idempotent: the first time is kept); not_found when there is none.
caf::expected<void> disable_user(connection& conn, const std::string& name);

/// Replaces a user's password hash; not_found when there is no such user.
caf::expected<void> set_user_password(connection& conn, const std::string& name,
                                      const std::string& password_hash);

/// What a node needs to accept a user's token: the users not disabled (no hash).
struct active_user {
  std::string id;
  std::string name;
  std::string role;
  std::string namespace_name;
};
caf::expected<std::vector<active_user>> active_users(connection& conn);

/// What a login checks: an active user and its hash; nullopt when no user of that name is
/// active (unknown or disabled).
struct user_credentials {
  active_user user;
  std::string password_hash;
};
caf::expected<std::optional<user_credentials>> user_credentials_of(connection& conn,
                                                                   const std::string& name);

} // namespace nf::store
