#include "cmd/cli_audit.hpp"

#include <pwd.h>
#include <unistd.h>

#include "engine/audit_trail.hpp"

namespace nf::cmd {

namespace {

std::string os_user() {
  if (const auto* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr)
    return pw->pw_name;
  return "uid" + std::to_string(geteuid());
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
    return "localhost";
  return name;
}

} // namespace

store::audit_event cli_audit_event(std::string action, std::string target,
                                   boost::json::object details) {
  return engine::audit_event("cli:" + os_user(), "cli " + host_name(), std::move(action),
                             std::move(target), std::move(details));
}

} // namespace nf::cmd
