# Every third-party dependency is found here once and exposed as a target.
find_package(Threads REQUIRED)
find_package(Boost 1.81 REQUIRED COMPONENTS json)

if(NF_FUZZ)
  return()  # the fuzz build needs Boost.JSON only
endif()

find_package(PostgreSQL REQUIRED)
find_package(spdlog REQUIRED)  # compiled spdlog: never header-only (3x slower builds)
# OpenSSL: HTTPS on the HTTP door (net/web/tls.*, http.tls_cert_file); the tests make
# throwaway certificates with it.
find_package(OpenSSL REQUIRED)

# CAF 0.17 ships no CMake config, Find module or pkg-config file.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
foreach(part core io openssl)
  find_library(CAF_${part}_LIBRARY caf_${part} REQUIRED)
  add_library(caf::${part} SHARED IMPORTED)
  set_target_properties(caf::${part} PROPERTIES
    IMPORTED_LOCATION ${CAF_${part}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR})
endforeach()
set_property(TARGET caf::core PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads)
set_property(TARGET caf::io PROPERTY INTERFACE_LINK_LIBRARIES caf::core)
# caf::openssl: only what speaks TLS between nodes links it (net/, never net/client/).
set_property(TARGET caf::openssl PROPERTY INTERFACE_LINK_LIBRARIES caf::io OpenSSL::SSL)

# libsodium: API keys' secrets and hashes, and the HMAC of HTTP tokens (net/web/auth/).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET GLOBAL libsodium)
add_library(sodium::sodium ALIAS PkgConfig::SODIUM)
