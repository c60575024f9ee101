#pragma once

// CAF 0.17 has no CAF_CHECK_MESSAGE: CHECK_SAYING says what failed, then checks.

#include <caf/test/unit_test.hpp>

#define CHECK_SAYING(cond, what)                                                                  \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      CAF_MESSAGE(what);                                                                          \
    CAF_CHECK(cond);                                                                              \
  } while (false)
