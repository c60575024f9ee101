#pragma once

// "WebhookSinks" managed (migration 0008, "signingSecret" 0025): create, list, read, change
// and remove a namespace's sinks. The relay reads the enabled ones (store/outbox.hpp,
// load_webhook_sinks); this file is the managing side, every statement scoped by namespace
// so a caller never reaches another namespace's sink. The signing secret is written here and
// never read back: a row says only whether it has one.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// A sink as the managing side sees it (no secret, only whether one is set).
struct webhook_sink_row {
  std::string id;
  std::string url;
  std::optional<std::vector<std::string>> event_types; ///< absent = every type
  int32_t max_attempts = 10;
  int32_t timeout_ms = 5000;
  bool enabled = true;
  bool signing_secret_set = false;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

/// What a new sink is: every field already checked by the caller.
struct new_webhook_sink {
  std::string url;
  std::optional<std::vector<std::string>> event_types;
  int32_t max_attempts = 10;
  int32_t timeout_ms = 5000;
  bool enabled = true;
  std::optional<std::string> signing_secret;
};

/// A change: each field present is written, each absent one kept. `event_types` and
/// `signing_secret` hold an optional inside: present-and-empty clears (every type; unsigned).
struct webhook_sink_change {
  std::optional<std::string> url;
  std::optional<std::optional<std::vector<std::string>>> event_types;
  std::optional<int32_t> max_attempts;
  std::optional<int32_t> timeout_ms;
  std::optional<bool> enabled;
  std::optional<std::optional<std::string>> signing_secret;
};

caf::expected<webhook_sink_row> create_webhook_sink(connection& conn, const namespace_id& ns,
                                                    const new_webhook_sink& s);
/// The namespace's sinks, oldest first.
caf::expected<std::vector<webhook_sink_row>> list_webhook_sinks(connection& conn,
                                                                const namespace_id& ns);
/// One sink by id (a uuid, checked by the caller); `not_found` when the namespace has none.
caf::expected<webhook_sink_row> get_webhook_sink(connection& conn, const namespace_id& ns,
                                                 const std::string& id);
caf::expected<webhook_sink_row> update_webhook_sink(connection& conn, const namespace_id& ns,
                                                    const std::string& id,
                                                    const webhook_sink_change& c);
/// Removes it; `not_found` when the namespace has no such sink.
caf::expected<void> remove_webhook_sink(connection& conn, const namespace_id& ns,
                                        const std::string& id);

} // namespace nf::store
