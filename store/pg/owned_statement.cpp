#include "store/pg/owned_statement.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace nf::store {

const statement& statement_variant(const statement& base, const std::string& name,
                                   const std::function<std::string()>& make_sql) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<owned_statement>> variants;
  std::lock_guard<std::mutex> guard{mutex};
  auto& slot = variants[name];
  if (!slot)
    slot = std::make_unique<owned_statement>(name, make_sql(), &base);
  return slot->st;
}

} // namespace nf::store
