#include "net/client/system_config.hpp"

#include <caf/io/middleman.hpp>

#include "proto/type_ids.hpp"

namespace nf::net {

system_config::system_config() {
  load<caf::io::middleman>();
  load<caf::id_block::nodeflow>();
  set("scheduler.policy", caf::atom("sharing"));
  set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(1)});
  set("middleman.connection-timeout", caf::timespan{std::chrono::seconds(5)});
}

} // namespace nf::net
