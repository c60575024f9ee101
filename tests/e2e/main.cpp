// The one translation unit of e2e_tests that defines main().
#define CAF_TEST_NO_MAIN
#include "caf/test/unit_test_impl.hpp"

int main(int argc, char** argv) {
  // An end-to-end test runs for tens of seconds (ctest's TIMEOUT bounds the suite);
  // the default per-test watchdog of 30 s would abort it. `-r N` still overrides.
  caf::test::engine::max_runtime(200);
  return caf::test::main(argc, argv);
}
