#pragma once

// How an HTTP handler asks the client protocol (proto/client_api.hpp): the same api actor,
// the same checks and the same relays as a CAF client, so every operation is written once.
// A request is sent from a short-lived actor spawned for it; its answer or error arrives
// on one of CAF's threads and the handler answers the exchange from there.

#include <chrono>
#include <functional>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/client_api.hpp"

namespace nf::net::web {

class gateway {
public:
  gateway(caf::actor_system& sys, client_api api, std::chrono::milliseconds timeout)
    : sys_(sys), api_(std::move(api)), timeout_(timeout) {}

  caf::actor_system& system() { return sys_; }
  const client_api& api() const { return api_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  /// Sends `xs...` to the api and calls `ok(reply)` or `err(error)` once, from a CAF
  /// thread. `timeout` bounds the wait (a long poll passes its own).
  template <class Reply, class Ok, class Err, class... Ts>
  void ask_for(std::chrono::milliseconds timeout, Ok ok, Err err, Ts... xs) {
    sys_.spawn([api = api_, timeout, ok = std::move(ok), err = std::move(err),
                xs...](caf::event_based_actor* self) mutable {
      self->request(api, timeout, std::move(xs)...)
        .then([ok](Reply& r) mutable { ok(r); }, [err](caf::error& e) mutable { err(e); });
    });
  }

  template <class Reply, class Ok, class Err, class... Ts>
  void ask(Ok ok, Err err, Ts... xs) {
    ask_for<Reply>(timeout_, std::move(ok), std::move(err), std::move(xs)...);
  }

  /// Sends `xs...` to the api for a message outside the published interface (the api's
  /// own, e.g. a hand-back of leases): from a short-lived local actor, so the api knows
  /// it comes from inside the process. No answer.
  template <class... Ts>
  void tell(Ts... xs) {
    sys_.spawn([api = caf::actor_cast<caf::actor>(api_), xs...](caf::event_based_actor* self) mutable {
      self->send(api, std::move(xs)...);
      self->quit();
    });
  }

private:
  caf::actor_system& sys_;
  client_api api_;
  std::chrono::milliseconds timeout_;
};

} // namespace nf::net::web
