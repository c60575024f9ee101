#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include <duktape.h>

#include "engine/script/evaluate.hpp"

namespace nf::engine::script {

namespace {

// Every block carries its size in a header, so the heap's total is known exactly
// and an allocation past the limit fails inside duktape, which throws a RangeError
// the script cannot catch its way out of for long: the flag below marks the run.
struct budget {
  std::size_t used = 0;
  std::size_t limit = 0;
  bool exceeded = false;
};

constexpr std::size_t header = alignof(std::max_align_t);

void* budget_alloc(void* udata, duk_size_t size) {
  auto* b = static_cast<budget*>(udata);
  if (size > b->limit || b->used + size > b->limit) {
    b->exceeded = true;
    return nullptr;
  }
  auto* p = static_cast<char*>(std::malloc(size + header));
  if (p == nullptr) {
    b->exceeded = true;
    return nullptr;
  }
  std::memcpy(p, &size, sizeof size);
  b->used += size;
  return p + header;
}

void budget_free(void* udata, void* ptr) {
  if (ptr == nullptr)
    return;
  auto* b = static_cast<budget*>(udata);
  auto* p = static_cast<char*>(ptr) - header;
  std::size_t size = 0;
  std::memcpy(&size, p, sizeof size);
  b->used -= size;
  std::free(p);
}

void* budget_realloc(void* udata, void* ptr, duk_size_t size) {
  if (ptr == nullptr)
    return budget_alloc(udata, size);
  if (size == 0) {
    budget_free(udata, ptr);
    return nullptr;
  }
  auto* b = static_cast<budget*>(udata);
  auto* p = static_cast<char*>(ptr) - header;
  std::size_t old = 0;
  std::memcpy(&old, p, sizeof old);
  if (size > old && (size - old > b->limit || b->used + (size - old) > b->limit)) {
    b->exceeded = true;
    return nullptr;
  }
  auto* q = static_cast<char*>(std::realloc(p, size + header));
  if (q == nullptr) {
    b->exceeded = true;
    return nullptr;
  }
  std::memcpy(q, &size, sizeof size);
  b->used = b->used - old + size;
  return q + header;
}

// Duktape calls this on an error outside any protected call, which the code below
// never makes; abort() then ends the sandbox process, which the node reports.
void fatal(void*, const char*) {
  std::abort();
}

struct run_args {
  const request* r;
};

// Both run inside duk_safe_call: a throw anywhere lands in the caller as an error value.
duk_ret_t set_input(duk_context* ctx, void* udata) {
  const auto& r = *static_cast<run_args*>(udata)->r;
  duk_push_lstring(ctx, r.input_json.data(), r.input_json.size());
  duk_json_decode(ctx, -1);
  duk_put_global_string(ctx, "$");
  return 0;
}

duk_ret_t run(duk_context* ctx, void* udata) {
  const auto& r = *static_cast<run_args*>(udata)->r;
  duk_push_lstring(ctx, r.program.data(), r.program.size());
  duk_eval(ctx);
  if (duk_is_undefined(ctx, -1)) {
    duk_pop(ctx);
    duk_push_null(ctx);
  }
  duk_json_encode(ctx, -1);
  return 1;
}

} // namespace

answer run_javascript(const request& r) {
  budget b;
  b.limit = static_cast<std::size_t>(r.memory_mb) << 20;
  answer out;
  duk_context* ctx = duk_create_heap(budget_alloc, budget_realloc, budget_free, &b, fatal);
  if (ctx == nullptr) {
    out.kind = outcome::memory;
    out.message = "the memory limit is too small to start a JavaScript heap";
    return out;
  }
  run_args args{&r};
  if (duk_safe_call(ctx, set_input, &args, 0, 1) != DUK_EXEC_SUCCESS) {
    out.kind = b.exceeded ? outcome::memory : outcome::error;
    out.message = std::string("input: ") + duk_safe_to_string(ctx, -1);
    duk_destroy_heap(ctx);
    return out;
  }
  duk_pop(ctx);
  auto rc = duk_safe_call(ctx, run, &args, 0, 1);
  if (b.exceeded) {
    out.kind = outcome::memory;
  } else if (rc != DUK_EXEC_SUCCESS) {
    // SyntaxError comes from the compiler: the program never ran.
    bool syntax = duk_is_error(ctx, -1) && duk_get_error_code(ctx, -1) == DUK_ERR_SYNTAX_ERROR;
    out.kind = syntax ? outcome::compile : outcome::error;
    out.message = duk_safe_to_string(ctx, -1);
    if (b.exceeded) // converting the error to text ran out of memory
      out.kind = outcome::memory;
  } else if (duk_is_string(ctx, -1)) {
    duk_size_t len = 0;
    const char* s = duk_get_lstring(ctx, -1, &len);
    out.values.emplace_back(s, len);
  } else {
    out.values.emplace_back("null"); // JSON.stringify gives undefined for a function
  }
  duk_destroy_heap(ctx);
  return out;
}

answer evaluate(const request& r) {
  return r.lang == language::jq ? run_jq(r) : run_javascript(r);
}

} // namespace nf::engine::script
