// The one translation unit of actor_tests that defines main().
#define CAF_TEST_NO_MAIN
#include "caf/test/unit_test_impl.hpp"

int main(int argc, char** argv) {
  return caf::test::main(argc, argv);
}
