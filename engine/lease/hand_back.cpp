#include "engine/lease/hand_back.hpp"

#include "store/lease_hand_back.hpp"

namespace nf::engine {

caf::expected<std::vector<std::string>> hand_back(store::connection& conn,
                                                  const std::vector<msg::leased_task>& tasks) {
  std::vector<store::undelivered_lease> ls;
  ls.reserve(tasks.size());
  for (const auto& t : tasks)
    ls.push_back({workflow_id{t.workflow_id}, task_id{t.task_id}, lease_token{t.lease_token}});
  return store::hand_back_leases(conn, ls);
}

} // namespace nf::engine
