# Precompiled headers for the targets built on CAF. CAF, Boost.JSON and spdlog
# headers cost about 10 s of CPU in every translation unit that includes them,
# as much as the unit's own code; parsed once per build instead, they keep a
# cold CI build inside its budget. One header set, compiled once (nf_actors),
# reused by every target with the same flags.
set(NF_PCH_HEADERS
  <caf/actor_system.hpp> <caf/event_based_actor.hpp> <caf/stateful_actor.hpp>
  <caf/scoped_actor.hpp> <caf/send.hpp> <caf/io/middleman.hpp>
  <boost/json.hpp> <spdlog/spdlog.h>)

# The target that compiles the header set.
function(nf_precompile_headers target)
  target_precompile_headers(${target} PRIVATE ${NF_PCH_HEADERS})
endfunction()

# A target that reuses nf_actors' precompiled headers.
function(nf_reuse_precompiled_headers target)
  target_precompile_headers(${target} REUSE_FROM nf_actors)
endfunction()

# Test code compiles at -Og (tests/CMakeLists.txt), and a header set precompiled at -O2
# would hand it functions parsed under the other level: the tests get their own copy,
# compiled once by nf_test_pch.
function(nf_reuse_test_precompiled_headers target)
  target_precompile_headers(${target} REUSE_FROM nf_test_pch)
endfunction()
