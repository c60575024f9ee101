#pragma once

// The frames of CAF's binary protocol (BASP, CAF 0.17) as they cross the client door: a
// 32-byte header whose bytes 4-7 give the payload's length (big endian), then the payload.
// CAF sizes its read buffer from a header's length before a byte of the payload arrives, so
// the door's guard (caf_door_guard.hpp) hands CAF only frames it has received whole, and
// refuses a header that announces more than it allows.

#include <cstddef>
#include <cstdint>

namespace nf::net {

inline constexpr size_t basp_header_bytes = 32;

struct basp_scan {
  /// Leading bytes that form whole frames.
  size_t complete = 0;
  /// Nonzero: the next header announces this many payload bytes, more than allowed.
  uint64_t refused_payload = 0;
};

/// Walks the frames of `data` (which starts at a frame's first byte) as far as they are
/// whole, stopping at a header that announces more than `max_payload` bytes.
basp_scan scan_basp_frames(const uint8_t* data, size_t n, uint64_t max_payload);

} // namespace nf::net
