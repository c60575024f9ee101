#include "engine/script/jq_modules.hpp"

namespace nf::engine::script {

namespace {

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}

bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

struct scanner {
  std::string_view p;
  std::size_t i = 0;
  std::optional<std::string> found;

  // Code up to the end, or (inside an interpolation) up to its closing parenthesis.
  void code(bool interpolation) {
    char prev = '\0'; // the last significant character before a token
    int parens = 0;
    while (i < p.size() && !found) {
      char c = p[i];
      if (space(c)) {
        ++i;
      } else if (c == '#') { // a comment runs to the end of the line
        while (i < p.size() && p[i] != '\n')
          ++i;
      } else if (c == '"') {
        ++i;
        string();
        prev = '"';
      } else if (ident_start(c)) {
        word(prev);
        prev = 'a';
      } else {
        ++i;
        if (c == '(')
          ++parens;
        if (c == ')' && parens-- == 0 && interpolation)
          return;
        prev = c;
      }
    }
  }

  // After the opening quote: up to and past the closing one.
  void string() {
    while (i < p.size() && !found) {
      char c = p[i++];
      if (c == '"')
        return;
      if (c == '\\' && i < p.size()) {
        if (p[i++] == '(')
          code(true);
      }
    }
  }

  void word(char prev) {
    std::size_t start = i;
    while (i < p.size() && (ident_char(p[i]) || (p[i] == ':' && i + 1 < p.size() && p[i + 1] == ':')))
      i += p[i] == ':' ? 2 : 1;
    auto w = p.substr(start, i - start);
    std::size_t j = i;
    while (j < p.size() && space(p[j]))
      ++j;
    bool key = j < p.size() && p[j] == ':';
    if ((w == "import" || w == "include") && prev != '.' && prev != '$' && !key)
      found = "jq: `" + std::string(w) + "` is not allowed: a script may not load modules";
  }
};

} // namespace

std::optional<std::string> module_directive(std::string_view program) {
  scanner s{program};
  s.code(false);
  return s.found;
}

} // namespace nf::engine::script
