#include "store/input_errors.hpp"

#include "proto/errors.hpp"

namespace nf::store {

caf::error invalid_input(const flow::problems& ps) {
  std::string msg;
  for (const auto& p : ps) {
    if (!msg.empty())
      msg += "; ";
    msg += flow::to_string(p);
  }
  return make_error(errc::invalid, std::move(msg));
}

} // namespace nf::store
