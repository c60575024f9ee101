#include "actors/fenced_writes.hpp"

#include <spdlog/logger.h>

#include "engine/metrics/node_metrics.hpp"
#include "proto/errors.hpp"
#include "store/partition_fence.hpp"

namespace nf::actors {

void note_stale_write(spdlog::logger& log, std::string_view writer, int16_t partition,
                      int64_t epoch, const caf::error& err) {
  engine::metrics::node_metrics().stale_writes_refused.with({writer}).inc();
  log.warn("stale_write_refused writer={} partition={} epoch={} detail=\"{}\"", writer,
           partition, epoch, nf::message_of(err));
}

std::vector<int16_t> drop_fenced(served_shards& served, spdlog::logger& log,
                                 std::string_view writer, const caf::error& err) {
  auto parts = store::fenced_partitions(err);
  if (parts.empty()) {
    // Unreadable (it should not be): stop serving every shard rather than retry forever.
    auto all = served.shards();
    parts.assign(all.begin(), all.end());
  }
  for (auto p : parts) {
    auto epoch = served.epoch_of(p);
    note_stale_write(log, writer, p, epoch, err);
    served.fenced(p, epoch);
  }
  return parts;
}

} // namespace nf::actors
