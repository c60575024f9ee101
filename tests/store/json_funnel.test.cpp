#define CAF_SUITE store.json_funnel
#include "caf/test/unit_test.hpp"

#include <boost/json.hpp>

#include "store/json.hpp"
#include "store/pg/errors.hpp"

using namespace nf::store;

CAF_TEST(strips NUL from strings and keys at any depth) {
  auto v = boost::json::parse(R"({"a\u0000b": ["x\u0000", {"k": "\u0000v"}], "n": null})");
  auto text = json(v).str();
  CAF_CHECK_EQUAL(text, R"({"ab":["x",{"k":"v"}],"n":null})");
}

CAF_TEST(keeps every JSON primitive and null as null) {
  auto v = boost::json::parse(R"({"s":"x","i":-3,"d":1.5,"b":false,"z":null,"o":{}})");
  auto text = json(v).str();
  CAF_CHECK_EQUAL(boost::json::parse(text), v); // 1.5 may print as 1.5E0
  auto null_text = json(boost::json::value(nullptr)).str();
  CAF_CHECK_EQUAL(null_text, "null");
}

CAF_TEST(malformed text is an invalid error naming what was parsed) {
  auto r = json_from_text("{\"a\": ", "input");
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::invalid);
  auto msg = nf::message_of(r.error());
  CAF_CHECK(msg.rfind("input: malformed JSON", 0) == 0);
}

CAF_TEST(sqlstates map to what the caller does next) {
  CAF_CHECK_EQUAL(classify_sqlstate("40001"), nf::errc::retry_tx);
  CAF_CHECK_EQUAL(classify_sqlstate("40P01"), nf::errc::retry_tx);
  CAF_CHECK_EQUAL(classify_sqlstate("23505"), nf::errc::conflict);
  CAF_CHECK_EQUAL(classify_sqlstate("08006"), nf::errc::conn_broken);
  CAF_CHECK_EQUAL(classify_sqlstate(nullptr), nf::errc::conn_broken);
  CAF_CHECK_EQUAL(classify_sqlstate("22P02"), nf::errc::invalid);
  CAF_CHECK_EQUAL(classify_sqlstate("42P01"), nf::errc::internal);
}
