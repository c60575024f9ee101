#pragma once

// `${secrets.NAME}` in an HTTP task's request, replaced in memory at dispatch. flow/ leaves
// the placeholder in the task's input (flow/expression.hpp), so the input stored in
// "TaskExecutions" and shown by the API keeps it; only the copy of the request the runner
// sends carries the value.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "engine/http/request.hpp"

namespace nf::engine::secrets {

/// A secret's value by name, or an error saying why there is none (naming the secret).
using lookup = std::function<caf::expected<std::string>(const std::string& name)>;

/// Whether `text` holds a `${secrets.` placeholder.
bool has_placeholder(const std::string& text);

/// Replaces every `${secrets.NAME}` of `text`; the first lookup error otherwise.
caf::expected<std::string> substitute(const std::string& text, const lookup& find);

/// The request with every placeholder of its URL, header names and values, and body
/// replaced; each secret is looked up once, and its value appended to `used`.
caf::expected<http::request> resolve_request(const http::request& req, const lookup& find,
                                             std::vector<std::string>& used);

/// Replaces each of `values` in `text`, as written and as escaped inside a JSON string, by
/// "***": what the runner reports of a request (an error that quotes the URL, an endpoint
/// that echoes a header) must not carry a secret it sent.
void scrub(std::string& text, const std::vector<std::string>& values);

} // namespace nf::engine::secrets
