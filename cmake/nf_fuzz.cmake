# nf_add_fuzzer(TARGET SOURCE LIBRARY [LIBS...]): a libFuzzer target over LIBRARY, which
# is instrumented for coverage and the sanitizers too, or the fuzzer is blind in it.
# Included only with NF_FUZZ=ON (scripts/fuzz-flow.sh).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "NF_FUZZ=ON needs clang++ (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
endif()
set(NF_FUZZ_SANITIZERS address,undefined)

function(nf_add_fuzzer target source library)
  target_compile_options(${library} PRIVATE
    -fsanitize=fuzzer-no-link,${NF_FUZZ_SANITIZERS} -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  add_executable(${target} ${source})
  target_compile_options(${target} PRIVATE
    -fsanitize=fuzzer,${NF_FUZZ_SANITIZERS} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer,${NF_FUZZ_SANITIZERS})
  target_link_libraries(${target} PRIVATE ${library} ${ARGN})
endfunction()
