# Generates a C++ source that embeds the web UI (ui/) into the binary, so a node serves it
# with nothing beside it and nothing fetched at run time. Run with cmake -P:
#   -DUI_DIR=... -DOUTPUT=...
# Only text assets are embedded (html, js, css, svg, json); anything else under ui/ is refused
# so a stray file cannot be served by surprise.
file(GLOB_RECURSE files RELATIVE "${UI_DIR}" "${UI_DIR}/*")
list(SORT files)
set(body "")
foreach(rel ${files})
  if(rel STREQUAL "CMakeLists.txt" OR rel STREQUAL "README.md")
    continue()
  endif()
  if(NOT rel MATCHES "\\.(html|js|css|svg|json)$")
    message(FATAL_ERROR "ui/${rel}: only .html, .js, .css, .svg and .json files are served")
  endif()
  if(NOT rel MATCHES "^[A-Za-z0-9_./-]+$")
    message(FATAL_ERROR "ui/${rel}: file names are letters, digits, '_', '-' and '.'")
  endif()
  file(READ "${UI_DIR}/${rel}" text)
  if(text MATCHES "\\)nfui\"")
    message(FATAL_ERROR "ui/${rel} contains the raw-string delimiter )nfui\"")
  endif()
  string(APPEND body "    {\"/ui/${rel}\", R\"nfui(${text})nfui\"},\n")
endforeach()
set(content "// Generated from ui/ by cmake/embed_ui.cmake. Do not edit.
#include \"net/web/ui_files.hpp\"

namespace nf::net::web {

const std::vector<embedded_file>& embedded_ui() {
  static const std::vector<embedded_file> all{
${body}  };
  return all;
}

} // namespace nf::net::web
")
include("${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake")
nf_write_if_changed("${OUTPUT}" "${content}")
