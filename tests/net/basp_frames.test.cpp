#define CAF_SUITE net.basp_frames
#include "caf/test/unit_test.hpp"

#include <cstdint>
#include <vector>

#include "net/door/basp_frames.hpp"

using namespace nf;

namespace {

// A BASP header announcing `len` payload bytes, then the payload.
void frame(std::vector<uint8_t>& out, uint32_t len) {
  std::vector<uint8_t> h(net::basp_header_bytes, 0);
  h[0] = 2; // direct_message
  h[4] = static_cast<uint8_t>(len >> 24);
  h[5] = static_cast<uint8_t>(len >> 16);
  h[6] = static_cast<uint8_t>(len >> 8);
  h[7] = static_cast<uint8_t>(len);
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), len, 0xab);
}

} // namespace

CAF_TEST(whole frames are counted and a frame still arriving is not) {
  std::vector<uint8_t> b;
  frame(b, 0);   // a heartbeat: a header alone
  frame(b, 300);
  frame(b, 70000);
  auto whole = b.size();
  auto all = net::scan_basp_frames(b.data(), whole, 1 << 20);
  CAF_CHECK_EQUAL(all.complete, whole);
  CAF_CHECK_EQUAL(all.refused_payload, 0u);
  // The last frame short of a byte: only the first two are whole.
  auto short_one = net::scan_basp_frames(b.data(), whole - 1, 1 << 20);
  CAF_CHECK_EQUAL(short_one.complete, 2 * net::basp_header_bytes + 300);
  // Part of a header: nothing to say about it yet.
  auto half_header = net::scan_basp_frames(b.data(), net::basp_header_bytes - 1, 1 << 20);
  CAF_CHECK_EQUAL(half_header.complete, 0u);
  CAF_CHECK_EQUAL(half_header.refused_payload, 0u);
}

CAF_TEST(a header announcing more than allowed is refused before its payload arrives) {
  std::vector<uint8_t> b;
  frame(b, 10);
  std::vector<uint8_t> huge;
  frame(huge, 0);
  huge[4] = 0xf0; // 4,026,531,840 bytes announced, none sent
  b.insert(b.end(), huge.begin(), huge.end());
  auto s = net::scan_basp_frames(b.data(), b.size(), 268435456);
  CAF_CHECK_EQUAL(s.complete, net::basp_header_bytes + 10);
  CAF_CHECK_EQUAL(s.refused_payload, 4026531840u);
  // Exactly the limit is allowed.
  std::vector<uint8_t> at_limit;
  frame(at_limit, 1000);
  auto ok = net::scan_basp_frames(at_limit.data(), at_limit.size(), 1000);
  CAF_CHECK_EQUAL(ok.complete, at_limit.size());
  CAF_CHECK_EQUAL(ok.refused_payload, 0u);
  auto over = net::scan_basp_frames(at_limit.data(), at_limit.size(), 999);
  CAF_CHECK_EQUAL(over.complete, 0u);
  CAF_CHECK_EQUAL(over.refused_payload, 1000u);
}
