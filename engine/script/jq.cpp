#include <map>
#include <string>

extern "C" {
#include <jq.h>
}

#include "engine/script/evaluate.hpp"
#include "engine/script/jq_modules.hpp"

namespace nf::engine::script {

namespace {

std::string text_of(jv v) {
  if (jv_get_kind(v) == JV_KIND_STRING) {
    std::string s(jv_string_value(v), static_cast<std::size_t>(jv_string_length_bytes(jv_copy(v))));
    jv_free(v);
    return s;
  }
  jv dumped = jv_dump_string(v, 0);
  std::string s = jv_string_value(dumped);
  jv_free(dumped);
  return s;
}

void collect_error(void* data, jv msg) {
  auto& out = *static_cast<std::string*>(data);
  auto text = text_of(msg);
  if (text.rfind("jq: error: ", 0) == 0)
    text.erase(0, 11);
  if (text.find("compile error") != std::string::npos && !out.empty())
    return; // "jq: 1 compile error" adds nothing to the message before it
  if (!out.empty())
    out += "; ";
  out += text;
}

// `input` and `inputs` read the next of jq's inputs: there are none. Without a callback
// libjq 1.6 dereferences a null one.
jv no_more_inputs(jq_state*, void*) {
  return jv_invalid_with_msg(jv_string("No more inputs"));
}

// Compiling is most of a small program's cost (jq 1.6 compiles its builtins with every
// program), and a workflow runs the same few programs over and over: a sandbox keeps the
// last few compiled programs. A compiled program is reusable: jq_start resets its state.
class compiled_cache {
 public:
  ~compiled_cache() { clear(); }
  jq_state* find(const std::string& program) {
    auto it = states_.find(program);
    return it == states_.end() ? nullptr : it->second;
  }
  void keep(const std::string& program, jq_state* jq) {
    if (states_.size() >= capacity)
      clear();
    states_.emplace(program, jq);
  }

 private:
  static constexpr std::size_t capacity = 16;
  void clear() {
    for (auto& [program, jq] : states_)
      jq_teardown(&jq);
    states_.clear();
  }
  std::map<std::string, jq_state*> states_;
};

compiled_cache& cache() {
  static compiled_cache c;
  return c;
}

} // namespace

answer run_jq(const request& r) {
  answer out;
  if (auto refused = module_directive(r.program)) {
    out.kind = outcome::compile;
    out.message = *refused;
    return out;
  }
  std::string errors;
  jq_state* jq = cache().find(r.program);
  if (jq != nullptr) {
    jq_set_error_cb(jq, collect_error, &errors);
  } else {
    jq = jq_init();
    if (jq == nullptr) {
      out.kind = outcome::memory;
      out.message = "jq could not start";
      return out;
    }
    jq_set_error_cb(jq, collect_error, &errors);
    jq_set_input_cb(jq, no_more_inputs, nullptr);
    // No search path: `modulemeta` and any import the check above missed find nothing.
    jq_set_attr(jq, jv_string("JQ_LIBRARY_PATH"), jv_array());
    if (r.program.find('\0') != std::string::npos || !jq_compile(jq, r.program.c_str())) {
      out.kind = outcome::compile;
      out.message = errors.empty() ? "the jq program does not compile" : errors;
      jq_teardown(&jq);
      return out;
    }
    cache().keep(r.program, jq);
  }
  jv input = jv_parse_sized(r.input_json.data(), static_cast<int>(r.input_json.size()));
  if (!jv_is_valid(input)) {
    out.kind = outcome::error;
    jv msg = jv_invalid_get_msg(input);
    out.message = "input: " + (jv_is_valid(msg) ? text_of(msg) : std::string("not JSON"));
    jq_set_error_cb(jq, nullptr, nullptr);
    return out;
  }
  jq_start(jq, input, 0);
  for (jv v = jq_next(jq);; v = jq_next(jq)) {
    if (jv_is_valid(v)) {
      out.values.push_back(text_of(jv_dump_string(v, 0)));
      continue;
    }
    if (jv_invalid_has_msg(jv_copy(v))) {
      out.kind = outcome::error;
      out.values.clear();
      out.message = text_of(jv_invalid_get_msg(v));
    } else {
      jv_free(v);
      if (jq_halted(jq)) { // `halt_error`: its message, if any, is the error
        jv msg = jq_get_error_message(jq);
        if (jv_is_valid(msg) && jv_get_kind(jv_copy(msg)) != JV_KIND_NULL) {
          out.kind = outcome::error;
          out.values.clear();
          out.message = text_of(msg);
        } else {
          jv_free(msg);
        }
      }
    }
    break;
  }
  jq_set_error_cb(jq, nullptr, nullptr); // `errors` ends here; the state lives on
  return out;
}

} // namespace nf::engine::script
