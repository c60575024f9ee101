#pragma once

#include "proto/errors.hpp"

namespace nf::store {

/// Maps a five-character SQLSTATE to what the caller does next. The only place
/// that knows SQLSTATE values.
errc classify_sqlstate(const char* sqlstate);

} // namespace nf::store
