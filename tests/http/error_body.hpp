#pragma once

// The check every HTTP suite makes of a refusal: the status, and Conductor's error body
// with it (`status`, a `message`, and the field named first in `validationErrors`).

#include <caf/test/dsl.hpp>

#include <cstdint>
#include <string>

#include "tests/support/http_client.hpp"

namespace nf::test {

inline void check_error(const http_reply& r, unsigned status, const std::string& field = {}) {
  CAF_CHECK_EQUAL(r.status, status);
  auto v = r.json();
  CAF_REQUIRE(v.is_object());
  const auto& o = v.as_object();
  CAF_CHECK_EQUAL(o.at("status").to_number<int64_t>(), static_cast<int64_t>(status));
  CAF_CHECK(o.at("message").is_string() && !o.at("message").as_string().empty());
  if (!field.empty()) {
    const auto& errs = o.at("validationErrors").as_array();
    CAF_REQUIRE(!errs.empty());
    CAF_CHECK_EQUAL(errs[0].at("path").as_string(), field);
  }
}

} // namespace nf::test
