#include "engine/system_tasks/task_result.hpp"

#include <boost/json/serialize.hpp>

namespace nf::engine {

msg::task_result system_task_result(const msg::leased_task& task, std::string status,
                                    const boost::json::object& output, std::string reason) {
  msg::task_result r;
  r.task_id = task.task_id;
  r.workflow_id = task.workflow_id;
  r.lease_token = task.lease_token;
  r.status = std::move(status);
  r.output_json = boost::json::serialize(output);
  r.reason = std::move(reason);
  return r;
}

} // namespace nf::engine
