#pragma once

// Who may do what, on every door: a key's or a user's role is one of reader < worker <
// operator < admin, and each may do what the ones below it may. An HTTP route and a
// client-protocol request each name the least role they need.

#include <string>

namespace nf {

/// The least role a request needs; `open` needs no credentials at all.
enum class access { open, reader, worker, operator_, admin };

/// "open", "reader", "worker", "operator", "admin".
const char* access_name(access a);

/// Whether a role (admin, operator, worker, reader) may do what needs `a`.
bool role_allows(const std::string& role, access a);

} // namespace nf
