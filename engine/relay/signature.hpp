#pragma once

// The signature of a webhook delivery, so a receiver can tell the relay's POSTs from
// anyone else's: HMAC-SHA256 with the sink's "signingSecret" over `<timestamp>.<body>`,
// sent as `X-Nodeflow-Signature: sha256=<hex>` beside `X-Nodeflow-Timestamp: <unix
// seconds>`. The timestamp is signed too, so a receiver that refuses old timestamps
// refuses replays; the body is signed as sent (the exact bytes, before any parsing).

#include <cstdint>
#include <string>

namespace nf::engine {

inline constexpr const char* signature_header = "X-Nodeflow-Signature";
inline constexpr const char* timestamp_header = "X-Nodeflow-Timestamp";

/// "sha256=" and the lowercase hex HMAC-SHA256 of `timestamp + "." + body` under `secret`.
std::string sign_delivery(const std::string& secret, int64_t timestamp_s, const std::string& body);

} // namespace nf::engine
