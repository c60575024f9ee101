#pragma once

// The lease guard stands between membership and the node. Membership talks to the
// database on its own thread, and a statement there may block (a half-open link, a
// lock, a server that stopped answering) for longer than a lease lasts. The guard runs on
// the scheduler, so it keeps time when membership cannot: it hears
// (partitions_atom, owned, valid_until) after every renewal or failure, `valid_until`
// being the steady clock's nanoseconds until which every owned lease is certainly still
// ours (its last successful renewal, sent at t, + lease_ms − a safety margin), tells the
// node (partitions_atom, owned) when that set changes, and tells it the empty set once
// `valid_until` passes without a newer word: a node never serves a partition another
// node may have taken over. Membership then takes it back only by acquiring it afresh
// (a new epoch).

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace nf::actors {

/// Spawns the guard, linked to `membership` (it dies with it), telling `node`.
caf::actor spawn_lease_guard(caf::local_actor* membership, caf::actor node);

} // namespace nf::actors
