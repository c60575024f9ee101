# nf_add_suites(BINARY suite...): one ctest test per CAF test suite.
# A CAF filter that matches nothing prints "tests: 0" and exits 0, so a renamed
# suite would pass silently; FAIL_REGULAR_EXPRESSION turns that into a failure.
# Extra arguments after LABELS / FIXTURES are applied to every suite.
function(nf_add_suites binary)
  cmake_parse_arguments(ARG "" "FIXTURES;TIMEOUT" "SUITES;LABELS" ${ARGN})
  foreach(suite ${ARG_SUITES})
    add_test(NAME ${binary}.${suite}
             COMMAND ${binary} -n -v 3 -s "^${suite}$")
    set_tests_properties(${binary}.${suite} PROPERTIES
      FAIL_REGULAR_EXPRESSION "tests: +0\n"
      TIMEOUT ${ARG_TIMEOUT})
    if(ARG_LABELS)
      set_tests_properties(${binary}.${suite} PROPERTIES LABELS "${ARG_LABELS}")
    endif()
    if(ARG_FIXTURES)
      set_tests_properties(${binary}.${suite} PROPERTIES FIXTURES_REQUIRED ${ARG_FIXTURES})
    endif()
  endforeach()
endfunction()
