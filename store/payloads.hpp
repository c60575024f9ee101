#pragma once

// Large values stored out of line (migration 0031, docs/schema.md "Payloads"). A task's input
// or output, or a workflow's output, longer than `payloads.inline_max_bytes` is written to
// "Payloads" and its row holds a reference ("inputPayloadId", "outputPayloadId") instead, so
// the rows the decider and the lessor read all the time stay narrow. Every write of those
// values places them with a payload_writes; every read that hands them on resolves the
// references (resolve_payloads, read_payloads), so no caller ever sees a reference.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/params.hpp"

namespace nf::store {

class connection;
class pipeline;
struct workflow_snapshot;
struct task_row;

/// Bounds and default of `payloads.inline_max_bytes` (config/settings.cpp declares the
/// setting with these).
inline constexpr int64_t default_inline_max_bytes = 65536;
inline constexpr int64_t min_inline_max_bytes = 1024;
inline constexpr int64_t max_inline_max_bytes = 64LL << 20;

/// The process's threshold, set once at start from the setting (`nodeflow serve`); the
/// default until then. A value longer than this (its JSON text, in bytes) goes out of line.
void set_inline_max_bytes(int64_t n);
int64_t inline_max_bytes();

/// True when a value of this JSON text is stored in "Payloads", not in its row. The output
/// cache ("TaskOutputCache") must not keep such an output: the cache row would be as wide as
/// the value the reference exists to keep out of hot rows.
bool stored_out_of_line(std::string_view json_text);

/// Where one value goes: the row's own column, or a reference to the payload holding it.
/// Neither set: no value to write (the column keeps what it has).
struct placed_value {
  std::optional<json_text> inline_json;
  std::optional<std::string> payload_id;
  bool offloaded() const { return payload_id.has_value(); }
  bool absent() const { return !inline_json && !payload_id; }
  std::optional<std::string> inline_text() const {
    return inline_json ? std::optional<std::string>{inline_json->str()} : std::nullopt;
  }
};

/// The funnel every write of an input or output passes through: `place` decides inline or
/// out of line, and `add_to` inserts the offloaded values, in the caller's pipeline, so they
/// commit or roll back with the rows that reference them.
class payload_writes {
public:
  placed_value place(const workflow_id& wf, const std::optional<json_text>& value);
  /// As `place`, for the output a task reports: an offloaded one is stored with its task
  /// definition's "secretOutputFields" redacted, as `task.finish` stores an inline one.
  placed_value place_reported(const workflow_id& wf, const task_id& task,
                              const std::optional<json_text>& value);
  bool empty() const { return ids_.empty(); }
  /// One statement inserting every value placed out of line; nothing when there is none.
  void add_to(pipeline& p) const;

private:
  std::vector<std::string> workflows_, ids_;
  std::vector<json_text> bodies_;
  std::vector<std::optional<std::string>> reported_by_;
};

/// The bodies of the payloads named by (workflow id, payload id), one statement: payload id
/// to JSON text. A reference with no payload is an `internal` error.
caf::expected<std::map<std::string, std::string>>
read_payloads(connection& conn, const std::vector<std::pair<std::string, std::string>>& refs);

/// Replaces every reference in these rows by the value it names (nothing to do, no
/// statement, when none has one).
caf::expected<void> resolve_payloads(connection& conn, std::vector<workflow_snapshot>& snaps);
caf::expected<void> resolve_payloads(connection& conn,
                                     std::vector<std::pair<workflow_id, task_row>>& rows);

} // namespace nf::store
