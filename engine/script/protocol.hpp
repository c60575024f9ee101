#pragma once

// What crosses the pipe between the node and a sandbox process (sandbox.hpp):
// one request frame in, one answer frame out. A frame is a 4-byte big-endian
// length and that many bytes. The layouts are binary rather than JSON so that
// neither side parses the script's input: only the engine that runs it does.
//
//   request: engine (1 byte: 'J' JavaScript, 'Q' jq) · memory limit in MiB (u32)
//            · time limit in ms (u32) · program length (u32) · program · input JSON (the rest)
//   answer:  kind (1 byte) · then for ok: count (u32) and each value as
//            length (u32) · JSON text; for every other kind: the message (the rest)

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nf::engine::script {

enum class language : char { javascript = 'J', jq = 'Q' };

struct request {
  language lang = language::javascript;
  std::uint32_t memory_mb = 64;
  /// The node kills the sandbox at this limit; the sandbox's CPU limit is a backstop
  /// for when the node is gone.
  std::uint32_t timeout_ms = 1000;
  std::string program;
  std::string input_json; ///< the object the program sees as `$` (JavaScript) or `.` (jq)
};

/// How a run ended. timeout and crash are decided by the node, never sent by a sandbox.
enum class outcome : char {
  ok = 'o',
  error = 'e',   ///< the program threw, or jq reported an error at run time
  compile = 'c', ///< the program does not compile
  memory = 'm',  ///< the program reached its memory limit
  timeout = 't', ///< the node killed the sandbox at the time limit
  crash = 'x',   ///< the sandbox process died or answered nonsense
};

struct answer {
  outcome kind = outcome::ok;
  std::vector<std::string> values; ///< ok: the JSON text of each result (jq may give several)
  std::string message;             ///< every other kind: what went wrong
};

/// Frames bigger than this are refused by both sides (a script's input or output included).
inline constexpr std::uint32_t max_frame = 64u << 20;

std::string encode(const request& r);
std::string encode(const answer& a);
/// nullopt on a malformed body (fuzzed or truncated bytes).
std::optional<request> decode_request(std::string_view body);
std::optional<answer> decode_answer(std::string_view body);

/// Writes `body` as one frame to `fd` (a socket: no SIGPIPE). False on error.
bool write_frame(int fd, std::string_view body);
/// Reads one frame from `fd`, blocking. nullopt on end of file, error or an oversized frame.
std::optional<std::string> read_frame(int fd);

} // namespace nf::engine::script
