#pragma once

// The error vocabulary every nodeflow answer uses, on every door: what went wrong, as a
// code that says what the caller does next, with a message for people. A client links
// only this; the store maps SQLSTATEs onto it (store/pg/errors.hpp). On the wire an
// error travels in the `nf_store` category, the name earlier clients know.

#include <cstdint>
#include <string>

#include <caf/error.hpp>

namespace nf {

/// What a caller does next when an operation fails.
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
  unauthenticated, ///< no credential, or one that does not hold (bad, expired, revoked key)
  forbidden,    ///< the credential holds but its role may not do this
};

const char* to_string(errc x);

/// Builds a `caf::error` in nodeflow's category carrying a human message.
caf::error make_error(errc code, std::string message);

/// The same, for an error the database reported, keeping its SQLSTATE.
caf::error make_error(errc code, std::string message, std::string sqlstate);

/// Whether `err` is one of nodeflow's errors (and not CAF's own, e.g. a request timeout).
bool is_nodeflow_error(const caf::error& err);

/// The code of `err`, or `errc::internal` for foreign categories.
errc code_of(const caf::error& err);

/// The human message carried by `err` (its CAF rendering for foreign categories).
std::string message_of(const caf::error& err);

/// The SQLSTATE behind an error ("" when it did not come from the database).
std::string sqlstate_of(const caf::error& err);

} // namespace nf
