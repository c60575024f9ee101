#define CAF_SUITE flow.uuid
#include "caf/test/unit_test.hpp"

#include <string>

#include "flow/uuid.hpp"

CAF_TEST(the canonical text of a uuid in either letter case) {
  CAF_CHECK(nf::flow::is_uuid("01890000-0000-7000-8000-000000000001"));
  CAF_CHECK(nf::flow::is_uuid("0189abcd-ef01-7abc-8def-0123456789ab"));
  CAF_CHECK(nf::flow::is_uuid("0189ABCD-EF01-7ABC-8DEF-0123456789AB"));
  CAF_CHECK(nf::flow::is_uuid("0189abcd-EF01-7abc-8DEF-0123456789ab"));
  CAF_CHECK(nf::flow::is_uuid("00000000-0000-0000-0000-000000000000"));
}

CAF_TEST(braces a urn prefix and the form without dashes are refused) {
  CAF_CHECK(!nf::flow::is_uuid("{0189abcd-ef01-7abc-8def-0123456789ab}"));
  CAF_CHECK(!nf::flow::is_uuid("{0189abcd-ef01-7abc-8def-0123456789a}"));
  CAF_CHECK(!nf::flow::is_uuid("urn:uuid:0189abcd-ef01-7abc-8def-0123456789ab"));
  CAF_CHECK(!nf::flow::is_uuid("0189abcdef017abc8def0123456789ab"));
}

CAF_TEST(a wrong length is refused) {
  CAF_CHECK(!nf::flow::is_uuid(""));
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def-0123456789a"));
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def-0123456789abc"));
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def-0123456789ab "));
}

CAF_TEST(anything but hex digits and dashes in their places is refused) {
  CAF_CHECK(!nf::flow::is_uuid("0189abcg-ef01-7abc-8def-0123456789ab"));  // g
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def-0123456789aZ"));  // Z
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def-01234567 9ab"));  // space
  CAF_CHECK(!nf::flow::is_uuid("0189abcd_ef01-7abc-8def-0123456789ab"));  // _ for a dash
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def0-123456789ab"));  // a dash moved
  CAF_CHECK(!nf::flow::is_uuid("0189abcd-ef01-7abc-8def-0123456789-b"));  // a dash for a digit
  CAF_CHECK(!nf::flow::is_uuid(std::string("0189abcd-ef01-7abc-8def-0123456789a\0", 36)));
}
