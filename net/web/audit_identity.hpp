#pragma once

// Who is behind an administrative request, for its audit record (store/audit.hpp): the
// exchange's principal and the client's address. The api actor trusts these fields only
// from this process (net/api/api.cpp, stamp_identity), so a request cannot choose them.

#include <utility>

#include "net/web/exchange.hpp"

namespace nf::net::web {

/// Sets `m.actor` and `m.origin` ("http <address>") from `ex`; returns `m`.
template <class Msg>
Msg with_identity(const exchange_ptr& ex, Msg m) {
  m.actor = ex->who().subject;
  m.origin = "http " + ex->remote();
  return m;
}

} // namespace nf::net::web
