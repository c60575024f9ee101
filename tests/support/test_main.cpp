// main() of every test binary, compiled once: CAF's test engine (its regex filters,
// its reporter) costs ~15 s of compiling, which each binary's own main.cpp used to pay.
// A binary that wants other engine defaults sets them before main runs
// (tests/e2e/e2e_fixture.cpp).
#include "caf/test/unit_test_impl.hpp"
