#pragma once

// Task and workflow definitions per namespace, cached by the decider.
//
// Invalidation rule (simplest correct one): before each batch the decider reads one
// stamp per namespace it is about to decide (store::load_definition_stamps: counts,
// the sum of task revisions, the latest "updatedAt" of both tables). A namespace
// whose stamp changed drops everything cached for it, so a definition registered
// before a start is always the one that start's first evaluation sees. As a backstop
// against an in-place update whose "updatedAt" is older than one already seen (two
// registrations committing out of order within the same instant), every namespace is
// re-read at least every `max_age`.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <caf/expected.hpp>

#include "flow/definitions.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

class definition_cache {
public:
  using clock = std::chrono::steady_clock;

  explicit definition_cache(clock::duration max_age = std::chrono::seconds{5})
    : max_age_(max_age) {}

  /// Checks the stamps of `namespaces` (one statement) and forgets what changed.
  caf::expected<void> refresh(store::connection& conn,
                              const std::vector<namespace_id>& namespaces);

  /// The same check with stamps the caller read (store::load_definition_stamps, or
  /// the decider's reads ahead of a batch).
  void apply_stamps(const std::map<std::string, std::string>& stamps,
                    const std::vector<namespace_id>& namespaces);

  /// Every task definition of `ns` (read once per stamp).
  caf::expected<std::shared_ptr<const flow::task_def_map>> task_defs(store::connection& conn,
                                                                     const namespace_id& ns);

  /// One workflow definition; `not_found` when it is not registered.
  caf::expected<std::shared_ptr<const flow::workflow_def>>
  workflow_def(store::connection& conn, const namespace_id& ns, const std::string& name,
               std::optional<int64_t> version);

  /// Forgets everything (e.g. after a reconnect).
  void clear();

private:
  struct entry {
    std::string stamp;
    clock::time_point checked_at;
    std::shared_ptr<const flow::task_def_map> tasks;
    std::map<std::pair<std::string, int64_t>, std::shared_ptr<const flow::workflow_def>>
      workflows;
  };
  clock::duration max_age_;
  std::map<std::string, entry> by_ns_;
};

} // namespace nf::engine
