#pragma once

// ASCII case folding for names that compare without case: HTTP header and method names,
// host names, content types, URL schemes, hex digits. Bytes outside A-Z pass unchanged, so
// UTF-8 text is never altered.

#include <string>
#include <string_view>

namespace nf::flow {

inline std::string ascii_lower(std::string_view text) {
  std::string out{text};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

} // namespace nf::flow
