#include "net/door/basp_frames.hpp"

namespace nf::net {

namespace {

uint32_t payload_length(const uint8_t* header) {
  const uint8_t* p = header + 4; // after operation, two padding bytes and flags
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

} // namespace

basp_scan scan_basp_frames(const uint8_t* data, size_t n, uint64_t max_payload) {
  basp_scan out;
  size_t pos = 0;
  while (n - pos >= basp_header_bytes) {
    uint64_t len = payload_length(data + pos);
    if (len > max_payload) {
      out.refused_payload = len;
      break;
    }
    if (n - pos - basp_header_bytes < len)
      break;
    pos += basp_header_bytes + static_cast<size_t>(len);
  }
  out.complete = pos;
  return out;
}

} // namespace nf::net
