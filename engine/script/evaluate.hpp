#pragma once

// Running one request in this process: JavaScript on duktape with an
// allocator capped at the request's memory limit, jq on libjq with module
// loading refused. No time limit here: a program may loop forever, which is
// why the node runs this only inside a sandbox process it can kill (pool.hpp).

#include "engine/script/protocol.hpp"

namespace nf::engine::script {

/// JavaScript: the program is evaluated as a script with the input as the global `$`;
/// the one value is the script's completion value as JSON (undefined → null).
answer run_javascript(const request& r);

/// jq: the program is applied to the input; one value per output.
answer run_jq(const request& r);

/// run_javascript or run_jq by the request's language.
answer evaluate(const request& r);

} // namespace nf::engine::script
