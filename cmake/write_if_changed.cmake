# Writes `content` to `path` only when it differs, so a regenerated source that did not change
# does not rebuild what depends on it.
function(nf_write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()
