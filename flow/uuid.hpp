#pragma once

#include <string_view>

namespace nf::flow {

/// True for the canonical text form of a UUID: 8-4-4-4-12 hex digits, either letter
/// case. Braces, a `urn:uuid:` prefix and the form without dashes, which Postgres would
/// also take, are refused: ids travel as this text, so that a malformed one is rejected
/// with a message before it reaches a statement, and a workflow's partition is read from
/// its last four digits. The one such test in nodeflow (flow/ is below every caller).
bool is_uuid(std::string_view text);

} // namespace nf::flow
