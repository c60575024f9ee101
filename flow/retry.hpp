#pragma once

// Retry and deadline arithmetic, shared by decide() and by the actors that arm
// timers, so that both compute the same instants.

#include <cstdint>
#include <optional>
#include <string_view>

#include "flow/definitions.hpp"
#include "flow/types.hpp"

namespace nf::flow {

struct task_execution;

/// FNV-1a, 64 bit: stable across platforms and runs, unlike std::hash.
std::uint64_t stable_hash(std::string_view data, std::uint64_t seed = 14695981039346656037ull);

/// The delay before the retry that follows the failure of attempt
/// `failed.attempt` (0-based), in ms:
///   FIXED               retryDelaySeconds
///   LINEAR_BACKOFF      retryDelaySeconds × backoffScaleFactor × (attempt + 1)
///   EXPONENTIAL_BACKOFF retryDelaySeconds × 2^attempt
/// capped by maxRetryDelaySeconds when set, plus a jitter in [0, backoffJitterMs)
/// derived from the identity (workflow id, ref, iteration, attempt) so that
/// decide() stays deterministic.
std::int64_t retry_delay_ms(const task_def& def, std::string_view workflow_id,
                            const task_identity& failed);

/// The reasonForIncompletion of an attempt whose worker did not answer within
/// responseTimeoutSeconds (its lease's start_to_close timer, or the sweep of its lease).
/// Such an attempt is retried whatever the task's timeoutPolicy, as Conductor does: the
/// policy governs timeoutSeconds and pollTimeoutSeconds only.
inline constexpr std::string_view response_timeout_reason =
  "responseTimeout: no completion or heartbeat within responseTimeoutSeconds";

/// Which deadline of a task execution expires first, and when.
enum class deadline_kind : std::uint8_t { poll, start_to_close, total };

struct deadline {
  deadline_kind kind;
  time_ms at;
};

/// The earliest deadline that applies to a non-terminal execution:
/// pollTimeoutSeconds from when it became available (scheduled + start delay)
/// while SCHEDULED and never polled; timeoutSeconds from its start while IN_PROGRESS;
/// totalTimeoutSeconds from `first_scheduled` (the first attempt's scheduled time)
/// in either state. Not responseTimeoutSeconds: that is the length of the worker's
/// lease, which heartbeats extend and which only the lease's holder and the sweep of
/// expired leases see (store/lease_sweep.cpp); the execution row cannot tell it.
std::optional<deadline> next_deadline(const task_def& def, const task_execution& e,
                                      time_ms first_scheduled);

/// "pollTimeoutSeconds", "timeoutSeconds", … — the field a deadline came from.
std::string_view field_of(deadline_kind k);

} // namespace nf::flow
