#include "store/index_scans.hpp"

namespace nf::store {

caf::expected<void> prefer_index_scans(connection& conn) {
  auto r = conn.exec("SET enable_seqscan = off");
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<void> prefer_index_order(connection& conn) {
  if (auto r = prefer_index_scans(conn); !r)
    return r;
  if (auto r = conn.exec("SET enable_sort = off"); !r)
    return std::move(r.error());
  return {};
}

} // namespace nf::store
