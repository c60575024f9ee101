#define CAF_SUITE store.binary_params
#include "caf/test/unit_test.hpp"

#include "store/pg/binary_params.hpp"

using namespace nf::store;

namespace {

constexpr uint32_t uuid_array = 2951, text_array_oid = 1009, int4_array = 1007,
                   int8_array = 1016, bool_array = 1000;

std::string bytes(std::initializer_list<int> xs) {
  std::string out;
  for (int x : xs)
    out += static_cast<char>(x);
  return out;
}

} // namespace

CAF_TEST(a statement declares the arrays its casts name and one type per parameter) {
  const statement st{"t.declared",
                     "SELECT * FROM unnest($1::uuid[], $3::text[], $4::timestamptz[]) "
                     "WHERE $5::bigint[] <> '{}' AND $6::integer[] IS NOT NULL "
                     "AND $6::bigint[] IS NOT NULL AND $2 = 1 AND $7::uuid = $7::uuid"};
  auto types = declared_array_types(st);
  CAF_REQUIRE_EQUAL(types.size(), 5u);
  CAF_CHECK_EQUAL(types[0], uuid_array);
  CAF_CHECK_EQUAL(types[1], 0u); // not cast
  CAF_CHECK_EQUAL(types[2], text_array_oid);
  CAF_CHECK_EQUAL(types[3], 0u); // an element type the encoder does not write
  CAF_CHECK_EQUAL(types[4], int8_array);
  // $6 is cast two ways and $7 is no array: both stay text (and $7, last, is dropped).
}

CAF_TEST(arrays are written in the binary array format) {
  auto u = binary_array(uuid_array, R"({"0190f6a1-7c2e-7000-8000-00000000002a",NULL})");
  CAF_REQUIRE(u);
  auto expected = bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0x0b, 0x86, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0,
                         0, 16, 0x01, 0x90, 0xf6, 0xa1, 0x7c, 0x2e, 0x70, 0x00, 0x80, 0x00, 0x00,
                         0x00, 0x00, 0x00, 0x00, 0x2a, 0xff, 0xff, 0xff, 0xff});
  CAF_CHECK(*u == expected);
  auto i = binary_array(int4_array, "{-2,7}");
  CAF_REQUIRE(i);
  CAF_CHECK(*i == bytes({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 4,
                         0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 4, 0, 0, 0, 7}));
  auto t = binary_array(text_array_oid, R"({"a\"b","NULL",x})");
  CAF_REQUIRE(t);
  CAF_CHECK(*t == bytes({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 3,
                         'a', '"', 'b', 0, 0, 0, 4, 'N', 'U', 'L', 'L', 0, 0, 0, 1, 'x'}));
  auto empty = binary_array(int8_array, "{}");
  CAF_REQUIRE(empty);
  CAF_CHECK(*empty == bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20}));
  auto nul = binary_array(text_array_oid, "{nULl}");
  CAF_REQUIRE(nul);
  CAF_CHECK(*nul == bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, 1, 0, 0, 0, 1, 0xff,
                           0xff, 0xff, 0xff}));
}

CAF_TEST(what the encoder cannot read exactly as the server goes as text) {
  CAF_CHECK(!binary_array(uuid_array, "{not-a-uuid}"));
  CAF_CHECK(!binary_array(uuid_array, "{{0190f6a1-7c2e-7000-8000-00000000002a}}"));
  CAF_CHECK(!binary_array(int4_array, "{+1}"));
  CAF_CHECK(!binary_array(int4_array, "{2147483648}"));
  CAF_CHECK(!binary_array(int4_array, "{1, 2}"));
  CAF_CHECK(!binary_array(int4_array, "{1,}"));
  CAF_CHECK(!binary_array(bool_array, "{yes}"));
  CAF_CHECK(!binary_array(text_array_oid, R"({"open})"));
  CAF_CHECK(!binary_array(text_array_oid, "[1:1]={x}"));
  CAF_CHECK(!binary_array(1185, "{2026-12-02}")); // timestamptz[]: not encoded here
}

CAF_TEST(a named statement sends its declared arrays binary and the rest as text) {
  const statement st{"t.wire", "SELECT $1::uuid[], $2, $3::text[]"};
  auto p = params::of(array_literal{"{0190f6a1-7c2e-7000-8000-00000000002a}"}, int64_t{5},
                      array_literal{"{{nested}}"});
  wire_params wire{st, p};
  CAF_REQUIRE_EQUAL(wire.count(), 3);
  CAF_CHECK_EQUAL(wire.formats()[0], 1);
  CAF_CHECK_EQUAL(wire.lengths()[0], 20 + 4 + 16);
  CAF_CHECK_EQUAL(wire.formats()[1], 0);
  CAF_CHECK_EQUAL(std::string{wire.values()[1]}, "5");
  CAF_CHECK_EQUAL(wire.formats()[2], 0);
  CAF_CHECK_EQUAL(std::string{wire.values()[2]}, "{{nested}}");
}

CAF_TEST(a text array made by text_array reaches the server as its very elements) {
  // Runs of plain characters, escaped quotes and backslashes at either end, an empty
  // string, a NULL and the word NULL: each must arrive exactly as it was given.
  std::vector<std::optional<std::string>> xs{std::string{R"({"a":"b\\c"})"},
                                             std::string{R"(\")"},
                                             std::string{},
                                             std::nullopt,
                                             std::string{"NULL"},
                                             std::string(300, 'x') + "\"" + std::string(5, 'y')};
  auto literal = text_array(xs);
  auto b = binary_array(text_array_oid, literal.text);
  CAF_REQUIRE(b);
  std::string expected = bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, 6, 0, 0, 0, 1});
  for (const auto& x : xs) {
    if (!x) {
      expected += bytes({0xff, 0xff, 0xff, 0xff});
      continue;
    }
    auto n = static_cast<uint32_t>(x->size());
    expected += bytes({static_cast<int>(n >> 24), static_cast<int>((n >> 16) & 0xff),
                       static_cast<int>((n >> 8) & 0xff), static_cast<int>(n & 0xff)});
    expected += *x;
  }
  CAF_CHECK(*b == expected);
  const std::string head = R"({"{\"a\":\"b\\\\c\"}","\\\"",)";
  CAF_CHECK_EQUAL(literal.text.substr(0, head.size()), head);
}
