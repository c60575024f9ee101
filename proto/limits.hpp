#pragma once

// Byte limits of user text that lands in a btree index. Postgres refuses an index row wider
// than about 2.7 KB (SQLSTATE 54000) only when it writes it, inside the transaction the
// request shares with others (group commit): every door checks these first, naming the field.

#include <cstddef>

namespace nf {

/// An idempotency key ("IdempotencyKeys" primary key), a correlation id
/// ("WorkflowExecutions_correlation_idx") or a request id ("RequestIds" primary key).
inline constexpr size_t max_key_bytes = 1024;

/// The longest a worker may give a task back for (callbackAfterSeconds): a year.
inline constexpr long long max_callback_after_seconds = 365LL * 24 * 3600;

} // namespace nf
