#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

namespace nf::store {

/// What a caller does next when a store operation fails.
enum class errc : uint8_t {
  retry_tx = 1, ///< serialization failure or deadlock (40001, 40P01): rerun the whole transaction
  conn_broken,  ///< the connection is gone before anything was committed: reconnect, retry
  in_doubt,     ///< the commit's outcome is unknown: never retried blindly, re-read instead
  conflict,     ///< unique violation (23505) the statement did not absorb
  stale,        ///< a version or lease compare-and-set found another writer first
  not_found,    ///< the row the caller named does not exist
  invalid,      ///< the input was rejected before (or by) the database; message says why
  lease_lost,   ///< a completion, failure or heartbeat presented a lease token that is no longer current
  unsupported,  ///< the server lacks a capability nodeflow needs
  internal,     ///< anything else the database reported
  unavailable,  ///< the database or the engine node cannot be reached now: try again later
};

const char* to_string(errc x);

/// Builds a `caf::error` in the `nf_store` category carrying a human message.
caf::error make_error(errc code, std::string message);

/// The same, for an error the server reported, keeping its SQLSTATE.
caf::error make_error(errc code, std::string message, std::string sqlstate);

/// The store error code of `err`, or `errc::internal` for foreign categories.
errc code_of(const caf::error& err);

/// The human message carried by a store error (empty when there is none).
std::string message_of(const caf::error& err);

/// The SQLSTATE behind a store error ("" when it did not come from the server).
std::string sqlstate_of(const caf::error& err);

/// Maps a five-character SQLSTATE to what the caller does next. The only place
/// that knows SQLSTATE values.
errc classify_sqlstate(const char* sqlstate);

} // namespace nf::store
