#include "actors/system_tasks/completion.hpp"

#include <chrono>

#include "proto/errors.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

using std::chrono::milliseconds;

// Completing a task: the decider answers after one commit; allow for a busy one.
constexpr milliseconds completion_timeout{30000};
// Completion attempts before giving up (the lease then expires and the task retries).
constexpr int completion_attempts = 3;

bool lease_lost(const caf::error& err) {
  return nf::code_of(err) == nf::errc::lease_lost
         || nf::message_of(err).find("lease lost") != std::string::npos;
}

} // namespace

void complete_system_task(caf::event_based_actor* self, const caf::actor& node,
                          const msg::task_result& result, int attempt,
                          const std::shared_ptr<spdlog::logger>& log) {
  self->request(node, completion_timeout, complete_atom_v, result)
    .then([self](const std::string&) { self->quit(); },
          [self, attempt, log, result](caf::error& err) {
            if (lease_lost(err) || attempt >= completion_attempts) {
              log->warn("system_task_completion_dropped task={} workflow={} attempt={} error=\"{}\"",
                        result.task_id, result.workflow_id, attempt, nf::message_of(err));
              self->quit();
              return;
            }
            self->delayed_send(self, milliseconds{200} * attempt, tick_atom_v,
                               int32_t{attempt + 1});
          });
}

} // namespace nf::actors
