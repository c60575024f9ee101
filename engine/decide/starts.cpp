// Starts in the decider's transaction: their answers, and the workflows they leave to
// evaluate without a "DecideQueues" row.

#include "engine/decide/attempt_state.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "config/folder_logger.hpp"
#include "store/decide_reads.hpp"
#include "store/index_scans.hpp"
#include "store/sharding.hpp"

namespace nf::engine {

caf::expected<void> decider_core::note_starts(std::vector<caf::expected<store::start_result>> started,
                               std::vector<store::workflow_snapshot> created,
                               attempt_state& st) {
  st.starts = std::move(started);
  std::map<std::string, store::workflow_snapshot> executions;
  for (auto& s : created)
    executions.emplace(s.id.str(), std::move(s));
  for (size_t i = 0; i < st.starts.size(); ++i) {
    const auto& r = st.starts[i];
    if (!r)
      continue;
    auto shard = r->shard.value();
    st.fx.hints.outbox_shards.insert(shard);
    if (shards_.count(shard) == 0)
      // Routed here before the node's committers shared the shards anew
      // (committer_split): its row waits for the committer that decides for it now.
      st.fx.hints.shards.insert(shard);
    else if (r->created) {
      // Never: the statement returns every execution it inserts. Without it the workflow
      // would be left with neither a decision nor a row that brings one.
      auto e = executions.find(r->id.str());
      if (e == executions.end())
        return nf::make_error(nf::errc::internal,
                                 "the start of workflow " + r->id.str() + " returned no execution");
      st.rowless_starts.emplace(r->id.str(), std::move(e->second));
    }
  }
  return {};
}

} // namespace nf::engine
