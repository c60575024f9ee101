# Generates a C++ source that embeds migrations/ (manifest order) into the binary,
# so `nodeflow migrate` needs no files beside it. Run with cmake -P:
#   -DMIGRATIONS_DIR=... -DOUTPUT=...
file(READ "${MIGRATIONS_DIR}/manifest.txt" manifest)
# Semicolons would split CMake lists; the manifest's comments may contain them.
string(REPLACE ";" "," manifest "${manifest}")
string(REPLACE "\n" ";" lines "${manifest}")
# legacy_checksums: per migration, the raw-file checksum earlier builds recorded and the
# checksum of the SQL it stands for (store/schema/migrations.hpp, legacy_checksum).
set(legacy_names "")
if(EXISTS "${MIGRATIONS_DIR}/legacy_checksums")
  file(READ "${MIGRATIONS_DIR}/legacy_checksums" legacy)
  string(REPLACE ";" "," legacy "${legacy}")
  string(REPLACE "\n" ";" legacy_lines "${legacy}")
  foreach(line ${legacy_lines})
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "^([0-9A-Za-z_]+) +([0-9a-f]+) +([0-9a-f]+)$")
      message(FATAL_ERROR "legacy_checksums: expected 'name recorded current', got '${line}'")
    endif()
    set(lname "${CMAKE_MATCH_1}")
    set(lrecorded "${CMAKE_MATCH_2}")
    set(lcurrent "${CMAKE_MATCH_3}")
    string(LENGTH "${lrecorded}" len1)
    string(LENGTH "${lcurrent}" len2)
    if(NOT len1 EQUAL 64 OR NOT len2 EQUAL 64)
      message(FATAL_ERROR "legacy_checksums: ${lname}: a checksum is 64 hex digits")
    endif()
    string(APPEND legacy_${lname} "{\"${lrecorded}\", \"${lcurrent}\"}, ")
    list(APPEND legacy_names "${lname}")
  endforeach()
endif()
set(body "")
set(names "")
foreach(line ${lines})
  string(STRIP "${line}" line)
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  separate_arguments(parts UNIX_COMMAND "${line}")
  list(GET parts 0 name)
  list(APPEND names "${name}")
  set(tx "true")
  list(LENGTH parts n)
  if(n GREATER 1)
    list(GET parts 1 flag)
    if(NOT flag STREQUAL "notx")
      message(FATAL_ERROR "manifest.txt: unknown flag '${flag}' on ${name} (only 'notx')")
    endif()
    set(tx "false")
  endif()
  foreach(dir up down)
    set(f "${MIGRATIONS_DIR}/${name}.${dir}.sql")
    if(NOT EXISTS "${f}")
      message(FATAL_ERROR "manifest.txt names ${name} but ${name}.${dir}.sql is missing")
    endif()
    file(READ "${f}" sql_${dir})
    if(sql_${dir} MATCHES "\\)nfsql\"")
      message(FATAL_ERROR "${f} contains the raw-string delimiter )nfsql\"")
    endif()
  endforeach()
  string(APPEND body "    {\"${name}\", ${tx},\n     R\"nfsql(${sql_up})nfsql\",\n     R\"nfsql(${sql_down})nfsql\",\n     {${legacy_${name}}}},\n")
endforeach()
foreach(lname ${legacy_names})
  list(FIND names "${lname}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "legacy_checksums names ${lname}, which manifest.txt does not list")
  endif()
endforeach()
set(content "// Generated from migrations/manifest.txt by cmake/embed_migrations.cmake. Do not edit.
#include \"store/schema/migrations.hpp\"

namespace nf::store {

const std::vector<migration>& embedded_migrations() {
  static const std::vector<migration> all{
${body}  };
  return all;
}

} // namespace nf::store
")
include("${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake")
nf_write_if_changed("${OUTPUT}" "${content}")
