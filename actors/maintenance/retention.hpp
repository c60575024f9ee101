#pragma once

// The retention settings (retention.*) as the partition manager's settings: maintenance and
// `nodeflow partitions` read them through here, so both drop what the node's configuration
// says, and the timer's claim looks back as far as timer hours are kept.

#include "config/settings.hpp"
#include "store/schema/partitions.hpp"

namespace nf::actors {

inline store::partition_settings retention_of(const config::values& settings) {
  store::partition_settings p;
  p.months_retained = static_cast<int>(settings.get(config::keys::retention_executions_months));
  p.history_months_retained =
    static_cast<int>(settings.get(config::keys::retention_history_months));
  p.hours_retained = static_cast<int>(settings.get(config::keys::retention_timers_hours));
  p.audit_months_retained = static_cast<int>(settings.get(config::keys::retention_audit_months));
  return p;
}

} // namespace nf::actors
