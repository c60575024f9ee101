#pragma once

// A leased task as a worker receives it: shared by the lessor and by the committers
// that lease to waiting polls (waiting_polls.hpp).

#include "proto/messages.hpp"
#include "store/queues.hpp"

namespace nf::actors {

msg::leased_task to_message(const store::leased_task& t);

} // namespace nf::actors
