#pragma once

// JSON_TRANSFORM: a path-based reshaping of a task's input, no scripting.
// The task's `mapping` input describes the output: every string starting with
// `$.`, `$[` or equal to `$` is a path into the rest of the input (`[*]`
// collects every match into an array); objects and arrays are mapped member by
// member; everything else is copied as written. A path that matches nothing
// yields null.

#include <functional>
#include <string>

#include <boost/json/value.hpp>

namespace nf::flow {

/// True when `s` is a path under the rules above.
bool is_transform_path(boost::json::string_view s);

/// Checks every path in `mapping`; calls `report(path_of_field, message)` for
/// each bad one. Returns true when all are valid.
bool check_mapping(const boost::json::value& mapping, const std::string& path,
                   const std::function<void(const std::string&, const std::string&)>& report);

/// Applies `mapping` to `source`. Never fails on data: bad paths were rejected
/// by check_mapping when the definition was validated, and map to null.
boost::json::value apply_mapping(const boost::json::value& mapping,
                                 const boost::json::value& source);

} // namespace nf::flow
