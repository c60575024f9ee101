#include "store/pg/dsn.hpp"

#include <algorithm>

namespace nf::store {

std::string with_database(const std::string& dsn, const std::string& db) {
  auto scheme = dsn.find("://");
  if (scheme == std::string::npos)
    return dsn + " dbname=" + db;
  auto slash = dsn.find('/', scheme + 3);
  auto query = dsn.find('?');
  std::string tail = query == std::string::npos ? "" : dsn.substr(query);
  auto head = dsn.substr(0, slash == std::string::npos ? std::min(query, dsn.size()) : slash);
  return head + "/" + db + tail;
}

} // namespace nf::store
