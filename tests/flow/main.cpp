// The one translation unit of flow_tests that defines main().
#include "caf/test/unit_test_impl.hpp"
