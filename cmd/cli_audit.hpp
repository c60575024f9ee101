#pragma once

// What an administrative command run straight against the database (`nodeflow keys`,
// `users`, `secrets`) records in "AuditEvents": the operating-system user who ran it, from
// which host.

#include <string>

#include <boost/json/object.hpp>

#include "store/audit.hpp"

namespace nf::cmd {

/// `action` on `target` by "cli:<user>" from "cli <host>".
store::audit_event cli_audit_event(std::string action, std::string target,
                                   boost::json::object details = {});

} // namespace nf::cmd
