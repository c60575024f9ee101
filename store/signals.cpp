#include "store/signals.hpp"

#include <boost/json.hpp>

#include "store/api_reads.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

caf::expected<void> deliver_signal(connection& conn, const workflow_id& id,
                                   const std::string& name, const boost::json::value& payload) {
  auto event_payload = json(boost::json::object{{"name", name}, {"payload", payload}});
  return perform_replanning(conn, [&](transaction&) -> caf::expected<void> {
    auto h = read_execution_header(conn, id);
    if (!h)
      return std::move(h.error());
    if (flow::is_terminal(h->status))
      return make_error(errc::invalid, "workflow " + id.str() + " is "
                                         + std::string{flow::to_string(h->status)}
                                         + ": signals go only to running or paused workflows");
    transition_plan plan;
    plan.wakes.push_back({id, h->ns, h->shard, "signal"});
    plan.events.push_back({id, h->ns, h->shard, "SIGNAL_RECEIVED", std::nullopt, std::nullopt,
                           event_payload});
    return apply_transition(conn, plan);
  });
}

} // namespace nf::store
