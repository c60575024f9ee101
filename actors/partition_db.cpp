#include "actors/partition_db.hpp"

#include <utility>

#include "proto/errors.hpp"

namespace nf::actors {

partition_db::partition_db(std::string dsn, const std::string& folder, int16_t shard,
                           store::session::setup_fn setup)
  : session_(std::move(dsn), setup),
    log_(folder_logger(folder)),
    shard_(shard) {
}

store::connection* partition_db::get(const char* what) {
  auto conn = session_.get();
  if (!conn) {
    failed(what, conn.error());
    return nullptr;
  }
  return *conn;
}

void partition_db::failed(const char* what, const caf::error& err) {
  session_.on_error(err);
  if (!warn_.allow())
    return;
  if (shard_ >= 0)
    log_->warn("{} partition={} error=\"{}\" suppressed={}", what, shard_, nf::message_of(err),
               warn_.suppressed());
  else
    log_->warn("{} error=\"{}\" suppressed={}", what, nf::message_of(err), warn_.suppressed());
}

} // namespace nf::actors
