#pragma once

// jq's `import` and `include` read files (and `import … as $name` reads JSON data)
// from search paths the program itself may name (`{search: "/"}`), so a sandboxed
// program may not use them at all.

#include <optional>
#include <string>
#include <string_view>

namespace nf::engine::script {

/// The refusal when `program` has an `import` or `include` directive, else nullopt.
/// Scans tokens the way jq's lexer does: strings and comments are skipped, and
/// `.import`, `$import` and `{import: …}` are names, not directives.
std::optional<std::string> module_directive(std::string_view program);

} // namespace nf::engine::script
