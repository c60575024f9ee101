#define CAF_SUITE engine.secrets
#include "caf/test/unit_test.hpp"

#include <set>

#include "engine/secrets/keyring.hpp"
#include "engine/secrets/placeholders.hpp"
#include "engine/secrets/sealing.hpp"
#include "proto/errors.hpp"

using namespace nf;
using namespace nf::engine::secrets;

namespace {

const namespace_id ns_a{"00000000-0000-0000-0000-00000000000a"};

master_key key_of(char fill) {
  auto k = parse_key(std::string(64, fill), "test key");
  CAF_REQUIRE(k);
  return *k;
}

} // namespace

CAF_TEST(a key reads as raw bytes or hex or base64 and a bad one is refused naming it) {
  auto hex = parse_key("  " + std::string(64, 'a') + "\n", "k");
  CAF_REQUIRE(hex);
  CAF_CHECK_EQUAL(hex->bytes[0], 0xaa);
  CAF_CHECK_EQUAL(hex->id.size(), 16u);
  auto generated = generate_key_text();
  CAF_CHECK_EQUAL(generated.size(), 45u); // 44 base64 characters and a newline
  auto b64 = parse_key(generated, "k");
  CAF_REQUIRE(b64);
  auto raw = parse_key(std::string(reinterpret_cast<const char*>(hex->bytes.data()), 32), "k");
  CAF_REQUIRE(raw);
  CAF_CHECK_EQUAL(raw->id, hex->id); // the id is derived from the key alone
  CAF_CHECK_NOT_EQUAL(b64->id, hex->id);
  auto bad = parse_key("too short", "secrets key file /x");
  CAF_REQUIRE(!bad);
  CAF_CHECK(nf::message_of(bad.error()).find("secrets key file /x: expected a 32-byte key")
            == 0);
  CAF_CHECK(!keyring::load("", ""));
}

CAF_TEST(a sealed value opens under its key with a fresh nonce each time) {
  keyring ring{key_of('1'), {}};
  auto a = seal(ring, ns_a, "API_TOKEN", "s3cr3t-value");
  auto b = seal(ring, ns_a, "API_TOKEN", "s3cr3t-value");
  CAF_REQUIRE(a && b);
  CAF_CHECK_EQUAL(a->key_id, ring.current().id);
  CAF_CHECK_EQUAL(a->nonce_hex.size(), 48u);
  CAF_CHECK_NOT_EQUAL(a->nonce_hex, b->nonce_hex);
  CAF_CHECK_NOT_EQUAL(a->sealed_hex, b->sealed_hex);
  CAF_CHECK(a->sealed_hex.find("s3cr3t") == std::string::npos);
  auto plain = unseal(ring, *a);
  CAF_REQUIRE(plain);
  CAF_CHECK_EQUAL(*plain, "s3cr3t-value");
}

CAF_TEST(a sealed value does not open under another name or key or with a flipped bit) {
  keyring ring{key_of('1'), {}};
  auto a = seal(ring, ns_a, "API_TOKEN", "s3cr3t-value");
  CAF_REQUIRE(a);
  auto renamed = *a;
  renamed.name = "OTHER";
  CAF_CHECK(!unseal(ring, renamed));
  auto flipped = *a;
  flipped.sealed_hex[0] = flipped.sealed_hex[0] == '0' ? '1' : '0';
  auto bad = unseal(ring, flipped);
  CAF_REQUIRE(!bad);
  CAF_CHECK(nf::message_of(bad.error()).find("s3cr3t") == std::string::npos);
  keyring other{key_of('2'), {}};
  auto unknown = unseal(other, *a);
  CAF_REQUIRE(!unknown);
  CAF_CHECK(nf::message_of(unknown.error()).find("sealed under key " + a->key_id)
            != std::string::npos);
}

CAF_TEST(rotation: earlier keys open old values and a reseal moves them to the current key) {
  keyring old_ring{key_of('1'), {}};
  auto old = seal(old_ring, ns_a, "DB_PASSWORD", "hunter2");
  CAF_REQUIRE(old);
  keyring ring{key_of('2'), {key_of('1')}};
  CAF_CHECK_EQUAL(ring.find(old->key_id), ring.find(key_of('1').id));
  auto plain = unseal(ring, *old);
  CAF_REQUIRE(plain);
  auto resealed = seal(ring, ns_a, "DB_PASSWORD", *plain);
  CAF_REQUIRE(resealed);
  CAF_CHECK_EQUAL(resealed->key_id, key_of('2').id);
  CAF_CHECK_NOT_EQUAL(resealed->key_id, old->key_id);
  keyring current_only{key_of('2'), {}};
  auto again = unseal(current_only, *resealed);
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(*again, "hunter2");
  CAF_CHECK(!unseal(current_only, *old)); // the old key retired: the old bytes are dead
}

CAF_TEST(placeholders are replaced in url headers and body and a missing one is named) {
  std::set<std::string> asked;
  lookup find = [&](const std::string& name) -> caf::expected<std::string> {
    asked.insert(name);
    if (name == "TOKEN")
      return std::string{"t0k"};
    return nf::make_error(nf::errc::not_found, "secret " + name + " is not defined");
  };
  http::request r;
  r.url = "http://127.0.0.1:1/x?k=${secrets.TOKEN}";
  r.headers = {{"Authorization", "Bearer ${secrets.TOKEN}"}, {"X-Plain", "${workflow.x}"}};
  r.body = R"({"a": "${secrets.TOKEN}-${secrets.TOKEN}"})";
  std::vector<std::string> used;
  auto sent = resolve_request(r, find, used);
  CAF_REQUIRE(sent);
  CAF_CHECK_EQUAL(sent->url, "http://127.0.0.1:1/x?k=t0k");
  CAF_CHECK_EQUAL(sent->headers[0].second, "Bearer t0k");
  CAF_CHECK_EQUAL(sent->headers[1].second, "${workflow.x}");
  CAF_CHECK_EQUAL(sent->body, R"({"a": "t0k-t0k"})");
  CAF_CHECK_EQUAL(used, std::vector<std::string>{"t0k"}); // looked up once
  CAF_CHECK_EQUAL(r.headers[0].second, "Bearer ${secrets.TOKEN}"); // the input is untouched
  r.body = "${secrets.NOPE}";
  auto missing = resolve_request(r, find, used);
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(nf::message_of(missing.error()), "secret NOPE is not defined");
}

CAF_TEST(scrub removes a sent value as written and as JSON-escaped) {
  std::string out = R"({"echo": "Bearer a\"b", "raw": "xa"b"})";
  scrub(out, {"a\"b"});
  CAF_CHECK_EQUAL(out, R"({"echo": "Bearer ***", "raw": "x***"})");
}
