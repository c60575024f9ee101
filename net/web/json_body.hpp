#pragma once

// Reading a request's JSON: the body, a query parameter, a field. Each failure answers the
// exchange with 400 naming what is wrong, and returns nothing, so a handler reads
//   auto body = read_json_body(ex, limits); if (!body) return;

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

#include "net/web/exchange.hpp"

namespace nf::net::web {

struct json_limits {
  size_t max_depth = 64; ///< nesting of arrays and objects
};

/// The body as JSON; an empty body is `empty_as` when given, else an error.
std::optional<boost::json::value> read_json_body(const exchange_ptr& ex, const json_limits& lim,
                                                 std::optional<boost::json::value> empty_as = {});

/// The body as a JSON object (400 naming `body` otherwise).
std::optional<boost::json::object> read_json_object(const exchange_ptr& ex,
                                                    const json_limits& lim);

/// An integer query parameter within [min, max]; `fallback` when absent.
std::optional<int64_t> query_int(const exchange_ptr& ex, const char* name, int64_t fallback,
                                 int64_t min, int64_t max);

/// A boolean query parameter ("true"/"false"); `fallback` when absent.
std::optional<bool> query_bool(const exchange_ptr& ex, const char* name, bool fallback);

} // namespace nf::net::web
