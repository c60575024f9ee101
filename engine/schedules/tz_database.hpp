#pragma once

// IANA time zones from the system's tz database (the TZif files of /usr/share/zoneinfo,
// Debian's `tzdata`), read once per zone and process and handed to flow/ as a pure table
// (flow/time_zone.hpp). "UTC", "Etc/UTC", "GMT" and "Z" need no file.

#include <memory>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "flow/time_zone.hpp"

namespace nf::engine::schedules {

/// The zone `id` names ("Europe/Berlin"); `invalid` naming `zoneId` when the id is malformed,
/// unknown to the database, or its file unreadable.
caf::expected<std::shared_ptr<const flow::time_zone>> load_zone(std::string_view id);

/// Parses a TZif file's bytes (RFC 8536, versions 1-4); empty `error` on success.
flow::time_zone parse_tzif(std::string_view bytes, std::string name, std::string& error);

} // namespace nf::engine::schedules
