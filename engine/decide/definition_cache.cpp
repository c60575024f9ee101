#include "engine/decide/definition_cache.hpp"

#include "store/decide_support.hpp"
#include "store/definitions.hpp"

namespace nf::engine {

caf::expected<void> definition_cache::refresh(store::connection& conn,
                                              const std::vector<namespace_id>& namespaces) {
  if (namespaces.empty())
    return {};
  auto stamps = store::load_definition_stamps(conn, namespaces);
  if (!stamps)
    return std::move(stamps.error());
  apply_stamps(*stamps, namespaces);
  return {};
}

void definition_cache::apply_stamps(const std::map<std::string, std::string>& stamps,
                                    const std::vector<namespace_id>& namespaces) {
  auto now = clock::now();
  for (const auto& ns : namespaces) {
    auto it = stamps.find(ns.str());
    auto stamp = it == stamps.end() ? std::string{} : it->second;
    auto& e = by_ns_[ns.str()];
    if (e.stamp != stamp || now - e.checked_at > max_age_) {
      e = entry{};
      e.stamp = std::move(stamp);
      e.checked_at = now;
    }
  }
}

caf::expected<std::shared_ptr<const flow::task_def_map>>
definition_cache::task_defs(store::connection& conn, const namespace_id& ns) {
  auto& e = by_ns_[ns.str()];
  if (!e.tasks) {
    auto defs = store::load_task_defs(conn, ns);
    if (!defs)
      return std::move(defs.error());
    e.tasks = std::make_shared<const flow::task_def_map>(std::move(*defs));
  }
  return e.tasks;
}

caf::expected<std::shared_ptr<const flow::workflow_def>>
definition_cache::workflow_def(store::connection& conn, const namespace_id& ns,
                               const std::string& name, std::optional<int64_t> version) {
  auto& e = by_ns_[ns.str()];
  // An execution always names its version; "latest" (-1) is only cached per stamp too.
  std::pair<std::string, int64_t> key{name, version.value_or(-1)};
  if (auto it = e.workflows.find(key); it != e.workflows.end())
    return it->second;
  auto def = store::load_workflow_def(conn, ns, name, version);
  if (!def)
    return std::move(def.error());
  auto ptr = std::make_shared<const flow::workflow_def>(std::move(*def));
  e.workflows.emplace(std::move(key), ptr);
  return ptr;
}

void definition_cache::clear() {
  by_ns_.clear();
}

} // namespace nf::engine
