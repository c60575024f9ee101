# Generates a C++ source that embeds migrations/ (manifest order) into the binary,
# so `nodeflow migrate` needs no files beside it. Run with cmake -P:
#   -DMIGRATIONS_DIR=... -DOUTPUT=...
file(READ "${MIGRATIONS_DIR}/manifest.txt" manifest)
# Semicolons would split CMake lists; the manifest's comments may contain them.
string(REPLACE ";" "," manifest "${manifest}")
string(REPLACE "\n" ";" lines "${manifest}")
set(body "")
foreach(line ${lines})
  string(STRIP "${line}" line)
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  separate_arguments(parts UNIX_COMMAND "${line}")
  list(GET parts 0 name)
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
  string(APPEND body "    {\"${name}\", ${tx},\n     R\"nfsql(${sql_up})nfsql\",\n     R\"nfsql(${sql_down})nfsql\"},\n")
endforeach()
set(content "// Generated from migrations/manifest.txt by cmake/embed_migrations.cmake. Do not edit.
#include \"store/migrations.hpp\"

namespace nf::store {

const std::vector<migration>& embedded_migrations() {
  static const std::vector<migration> all{
${body}  };
  return all;
}

} // namespace nf::store
")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
