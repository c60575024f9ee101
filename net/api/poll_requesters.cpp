#include "net/api/poll_requesters.hpp"

namespace nf::net {

poll_requesters::opened poll_requesters::open(const caf::actor_addr& who) {
  auto& e = by_sender_[who];
  bool first = e.open++ == 0;
  if (first)
    e.gone = std::make_shared<bool>(false);
  return {e.gone, first};
}

bool poll_requesters::close(const caf::actor_addr& who) {
  auto it = by_sender_.find(who);
  if (it == by_sender_.end() || --it->second.open > 0)
    return false;
  by_sender_.erase(it);
  return true;
}

bool poll_requesters::went_away(const caf::actor_addr& who) {
  auto it = by_sender_.find(who);
  if (it == by_sender_.end())
    return false;
  *it->second.gone = true;
  by_sender_.erase(it);
  return true;
}

} // namespace nf::net
