#pragma once

// A tiny engine for tests: holds one execution's snapshot, applies decide()
// until it settles, and lets a test play worker, clock and operator.

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "flow/decide.hpp"
#include "flow/definitions.hpp"
#include "flow/snapshot.hpp"

namespace nf::flow::test {

/// A workflow definition from JSON text; aborts with the problems when the
/// fixture itself is invalid (a broken test, not a failed check).
workflow_def workflow(std::string_view json);
task_def task_definition(std::string_view json);
boost::json::object object(std::string_view json);

/// "ref", "ref@iteration", "ref+attempt", "ref@iteration+attempt".
std::string label(const task_identity& id);

class sim {
 public:
  explicit sim(workflow_def def, task_def_map defs = {}, std::string_view input = "{}",
               time_ms start = 1'000'000);

  /// decide + apply until nothing changes; every decision is kept.
  void settle();

  /// The latest execution of (ref, iteration); aborts if there is none.
  const task_execution& task(std::string_view ref, std::int32_t iteration = 0) const;
  const task_execution* find(std::string_view ref, std::int32_t iteration = 0) const;

  void start(std::string_view ref, std::int32_t iteration = 0);
  void complete(std::string_view ref, std::string_view output = "{}", std::int32_t iteration = 0);
  void fail(std::string_view ref, std::string_view reason = "boom", std::int32_t iteration = 0,
            task_status status = task_status::failed);
  void advance(std::int64_t ms);
  void signal(std::string name, std::string_view payload = "{}");
  /// Conductor's update by ref name: a signal addressed to the WAIT `ref`.
  void update_by_ref(std::string ref, std::string status, std::string_view output = "{}");

  /// Labels of every inserted execution, in order, space separated.
  std::string scheduled() const;
  /// The decision that ended the workflow; aborts if none did.
  const decision& ending() const;
  /// Types of every event, space separated.
  std::string events() const;

  workflow_def def;
  task_def_map defs;
  snapshot snap;
  time_ms now;
  std::vector<decision> decisions;
  /// The ids of tasks whose input names ${CPEWF_TASK_ID}: "t1", "t2", …
  task_id_source ids = [this] { return "t" + std::to_string(++made_ids_); };

 private:
  task_execution& active(std::string_view ref, std::int32_t iteration);
  std::int64_t next_signal_ = 1;
  int made_ids_ = 0;
};

} // namespace nf::flow::test
