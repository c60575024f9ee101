#pragma once

#include <string_view>

#include <boost/json/fwd.hpp>
#include <caf/expected.hpp>

#include "store/pg/params.hpp"

namespace nf::store {

/// The one funnel every JSONB write passes through. Postgres cannot store the
/// NUL code point in jsonb, and refusing a task's finished result over one
/// unprintable byte is the worse bug, so `\u0000` is stripped from every string
/// and key rather than failing the write.
json_text json(const boost::json::value& v);

/// Parses untrusted JSON text (error_code overload, never throws) and funnels
/// it; malformed text is an `invalid` error naming `what`.
caf::expected<json_text> json_from_text(std::string_view text, std::string_view what);

/// Builds the funnel's result from already stripped text. Only json.cpp calls it.
json_text make_json_text(std::string text);

} // namespace nf::store
