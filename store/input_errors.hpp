#pragma once

#include <caf/error.hpp>

#include "flow/problem.hpp"

namespace nf::store {

/// Problems found in user input, as the `invalid` error the API returns: every
/// problem as `path: what was expected`, joined by "; ".
caf::error invalid_input(const flow::problems& ps);

} // namespace nf::store
