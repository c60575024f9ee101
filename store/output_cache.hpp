#pragma once

// "TaskOutputCache" (docs/schema.md, 0010): the COMPLETED outputs of SIMPLE tasks scheduled
// with a cache key, per namespace and task definition. The completion writes an output
// ("task.finish", store/task_transitions.cpp), the decider looks keys up before it writes the
// decision that would schedule them (lookup_output_cache), and maintenance prunes expired rows.
// A read ignores expired rows ("expiresAt" > now()): the prune runs only now and then.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

/// Outputs whose JSON text is longer are never cached.
#define NF_MAX_CACHED_OUTPUT_BYTES 32768
#define NF_CACHE_STRINGIFY_(x) #x
#define NF_CACHE_STRINGIFY(x) NF_CACHE_STRINGIFY_(x)

// The one test of whether a finished task's output may be cached, spelt once for every
// statement that writes the cache, as a SQL condition on `output` (an expression of the stored
// output, a string literal). An offloaded output, a reference to a payload stored out of line,
// must fail it: cached, the reference would outlive what it points at. The size bound keeps
// every output large enough to be worth offloading out of the cache.
#define NF_OUTPUT_CACHEABLE(output)                                                          \
  "octet_length((" output ")::text) <= " NF_CACHE_STRINGIFY(NF_MAX_CACHED_OUTPUT_BYTES)

namespace nf::store {

constexpr int64_t max_cached_output_bytes = NF_MAX_CACHED_OUTPUT_BYTES;

/// A key to look up: the task's namespace, its task definition's name and the resolved key.
struct output_cache_key {
  namespace_id ns;
  std::string task_def_name;
  std::string key;
};

/// A live entry found: its key and the cached output (JSON text).
struct cached_output {
  output_cache_key key;
  std::string output;
};

/// The live entries ("expiresAt" > now()) for `keys`, in one statement on `conn` (the caller's
/// transaction). Keys without one are left out.
caf::expected<std::vector<cached_output>>
lookup_output_cache(connection& conn, const std::vector<output_cache_key>& keys);

/// Deletes up to `limit` expired rows (oldest expiry first, on the "expiresAt"
/// index); returns how many went. Call again while it returns `limit`.
caf::expected<int64_t> prune_output_cache(connection& conn, int64_t limit);

} // namespace nf::store
