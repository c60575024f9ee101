#pragma once

// What the lessor (lessor.hpp) asks its database: a queue's lease policy and one lease
// transaction for a batch of polls. The real one owns the lessor's connection and logs
// its failures (partition_db.hpp); the lessor's own rules (which polls share a
// transaction, which wait parked and for how long) are tested against a fake.

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/lease_facts.hpp"
#include "store/queues.hpp"

namespace nf::actors {

class lease_store {
public:
  virtual ~lease_store() = default;

  /// The lease policy of the task definition serving `queue` (errc::not_found: none).
  virtual caf::expected<store::queue_policy> queue_policy(const namespace_id& ns,
                                                          const std::string& queue) = 0;

  /// Leases each request's batch in ONE transaction, answers in request order
  /// (store::lease_batches); `facts` (may be null) receives what completions need.
  virtual caf::expected<std::vector<std::vector<store::leased_task>>>
  lease(const std::vector<store::lease_request>& reqs, std::vector<store::lease_facts>* facts) = 0;
};

} // namespace nf::actors
