#include "store/sharding.hpp"

#include <algorithm>
#include <cassert>

#include "store/hex.hpp"

namespace nf {

int16_t shard_of(std::string_view uuid_text, int partition_count) {
  assert(partition_count > 0 && uuid_text.size() >= 4);
  unsigned v = 0;
  for (char c : uuid_text.substr(uuid_text.size() - 4))
    v = v * 16 + static_cast<unsigned>(std::max(0, hex_value(c)));
  return static_cast<int16_t>(v % static_cast<unsigned>(partition_count));
}

int16_t queue_shard(std::string_view queue_name, int partition_count) {
  assert(partition_count > 0);
  uint32_t h = 2166136261u;
  for (char c : queue_name) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return static_cast<int16_t>(h % static_cast<uint32_t>(partition_count));
}

} // namespace nf
