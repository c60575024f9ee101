#include "store/index_scans.hpp"

namespace nf::store {

caf::expected<void> prefer_index_scans(connection& conn) {
  auto r = conn.exec("SET enable_seqscan = off");
  if (!r)
    return std::move(r.error());
  return {};
}

} // namespace nf::store
