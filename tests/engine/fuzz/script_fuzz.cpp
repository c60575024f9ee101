// libFuzzer target: arbitrary bytes through the script sandbox. The bytes are read
// as a request frame and an answer frame (each must re-encode to what it decoded
// from), scanned for jq module directives, and run as a program: the first byte
// picks JavaScript or jq, the rest up to the first NUL is the program, what follows
// its input. The program runs in a sandbox process, this very binary started with
// `--sandbox`, under the node's limits (300 ms, 32 MB); the run may fail, time out
// or run out of memory, but the sandbox must never crash, and every result must be JSON.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>

#include "engine/script/jq_modules.hpp"
#include "engine/script/pool.hpp"
#include "engine/script/sandbox.hpp"

namespace {

using namespace nf::engine::script;

void require(bool ok) {
  if (!ok)
    std::abort();
}

pool& sandboxes() {
  static pool p{[] {
    pool_options o;
    o.argv = {"/proc/self/exe", "--sandbox"};
    o.processes = 1;
    o.timeout = std::chrono::milliseconds{300};
    o.memory_mb = 32;
    return o;
  }()};
  return p;
}

void frames(std::string_view bytes) {
  if (auto r = decode_request(bytes))
    require(encode(*r) == bytes);
  if (auto a = decode_answer(bytes))
    require(encode(*a) == bytes);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // The sandbox process this target starts for itself (an empty environment, no
  // libFuzzer flags): serve requests, never fuzz.
  if (*argc >= 2 && std::string_view((*argv)[1]) == "--sandbox")
    std::exit(sandbox_main());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  frames(bytes);
  (void)module_directive(bytes);
  if (bytes.empty())
    return 0;
  request r;
  r.lang = (bytes[0] & 1) != 0 ? language::jq : language::javascript;
  auto rest = bytes.substr(1);
  auto nul = rest.find('\0');
  r.program = std::string(rest.substr(0, nul));
  r.input_json = nul == std::string_view::npos ? "{}" : std::string(rest.substr(nul + 1));
  auto a = sandboxes().run(r);
  require(a.kind != outcome::crash);
  if (a.kind == outcome::ok) {
    boost::json::parse_options deep;
    deep.max_depth = 100000;
    for (const auto& v : a.values) {
      boost::json::error_code ec;
      boost::json::parse(v, ec, {}, deep);
      require(!ec);
    }
  }
  return 0;
}
