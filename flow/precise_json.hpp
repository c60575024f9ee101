#pragma once

// JSON text parsed with every number read back exactly as written. Boost.JSON 1.81 rounds
// some decimals (17 significant digits, large exponents) to a neighbouring double, so a value
// it serialised could come back one unit in the last place off: a definition read, written and
// read again would change. Here each non-integer number is converted from its own text by
// std::from_chars, which rounds correctly.

#include <string_view>

#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>

namespace nf::flow {

/// Parses `text` (one JSON document) into a value on `sp`; `ec` is set and the value null on
/// a syntax error or when `opts` (depth, comments, …) refuse it.
boost::json::value parse_precise(std::string_view text, boost::system::error_code& ec,
                                 boost::json::storage_ptr sp = {},
                                 const boost::json::parse_options& opts = {});

} // namespace nf::flow
