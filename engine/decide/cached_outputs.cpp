#include "engine/decide/cached_outputs.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "engine/decide/mapping.hpp"
#include "store/output_cache.hpp"

namespace nf::engine {

caf::expected<void> complete_from_cache(store::connection& conn, std::vector<workflow_plan>& plans,
                                        const replan_fn& replan) {
  using key = std::tuple<std::string, std::string, std::string>;  // namespace, task def, key
  std::set<key> asked;
  std::map<std::string, flow::cached_outputs> found;  // by namespace
  for (int round = 0; round < max_cache_lookups; ++round) {
    std::vector<store::output_cache_key> keys;
    for (const auto& p : plans)
      for (const auto& t : p.write.inserts)
        if (!t.cache_key.empty()
            && asked.emplace(p.ns.str(), t.task_def_name, t.cache_key).second)
          keys.push_back({p.ns, t.task_def_name, t.cache_key});
    if (keys.empty())
      return {};
    auto hits = store::lookup_output_cache(conn, keys);
    if (!hits)
      return std::move(hits.error());
    if (hits->empty())
      return {};
    for (auto& h : *hits)
      found[h.key.ns.str()][{h.key.task_def_name, h.key.key}] = parse_object(h.output);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      auto f = found.find(plans[i].ns.str());
      if (f == found.end())
        continue;
      const auto& inserts = plans[i].write.inserts;
      bool hit = std::any_of(inserts.begin(), inserts.end(), [&](const auto& t) {
        return !t.cache_key.empty() && f->second.count({t.task_def_name, t.cache_key}) != 0;
      });
      if (hit)
        plans[i] = replan(i, f->second);
    }
  }
  return {};
}

} // namespace nf::engine
