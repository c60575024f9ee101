#pragma once

#include <string>
#include <vector>

namespace nf::store {

/// One numbered raw-SQL migration from migrations/.
struct migration {
  std::string name;
  bool transactional; ///< false for `notx` ones (e.g. ALTER TYPE … ADD VALUE), run alone
  std::string up;
  std::string down;
};

/// The migrations compiled into this binary, in manifest order.
const std::vector<migration>& embedded_migrations();

} // namespace nf::store
