#pragma once

// The namespace of every request an HTTP exchange sends: its principal's, set by the server
// (exchange.hpp), never a body's or a query's. So an HTTP client sees only its namespace's
// rows: the api resolves the name, and the store and the engine refuse another's as not found.

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "net/web/exchange.hpp"
#include "proto/limits.hpp"
#include "proto/messages.hpp"

namespace nf::net::web {

/// Who sent an administrative request and from where, for its audit record
/// (store/audit.hpp): the api trusts these fields only from this process.
template <class Message>
Message signed_by(const exchange_ptr& ex, Message m) {
  m.actor = ex->who().subject;
  m.origin = "http " + ex->remote();
  return m;
}

template <class Message>
Message scoped(const exchange_ptr& ex, Message m) {
  m.namespace_id = ex->who().namespace_name;
  if constexpr (msg::names_its_sender<Message>::value)
    m = signed_by(ex, std::move(m));
  return m;
}

/// The request's `X-Request-Id` header into `m.request_id` (migration 0037: a start without an
/// idempotency key, a command, a signal or a task update sent again with the same id is
/// applied once and answered as the first). False, after a 400 naming the header, when it is
/// longer than proto/limits.hpp allows.
template <class Message>
bool with_request_id(const exchange_ptr& ex, Message& m) {
  auto id = ex->header("x-request-id");
  if (id.size() > max_key_bytes) {
    ex->fail(400, "X-Request-Id: expected at most " + std::to_string(max_key_bytes)
                    + " bytes, got " + std::to_string(id.size()),
             "X-Request-Id");
    return false;
  }
  m.request_id = std::move(id);
  return true;
}

inline std::vector<msg::task_result> scoped(const exchange_ptr& ex,
                                            std::vector<msg::task_result> rs) {
  for (auto& r : rs)
    r.namespace_id = ex->who().namespace_name;
  return rs;
}

} // namespace nf::net::web
