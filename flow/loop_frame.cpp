#include "flow/loop_frame.hpp"

#include "flow/def_index.hpp"

namespace nf::flow {

loop_frame loop_frame::inner(std::int32_t it) const {
  loop_frame f;
  f.path_ = path_;
  f.suffix_ = suffix_;
  if (!path_.empty())
    f.suffix_ += "__" + std::to_string(path_.back());
  f.path_.push_back(it);
  return f;
}

loop_frame loop_frame::outer(std::size_t depth) const {
  loop_frame f;
  for (std::size_t i = 0; i < depth && i < path_.size(); ++i)
    f = f.inner(path_[i]);
  return f;
}

bool has_iteration_suffix(std::string_view ref) {
  auto at = ref.rfind("__");
  if (at == std::string_view::npos || at + 2 == ref.size())
    return false;
  for (auto c : ref.substr(at + 2))
    if (c < '0' || c > '9')
      return false;
  return true;
}

std::optional<std::pair<std::string_view, std::int32_t>>
split_iteration_suffix(std::string_view ref) {
  if (!has_iteration_suffix(ref))
    return std::nullopt;
  auto at = ref.rfind("__");
  std::int64_t n = 0;
  for (auto c : ref.substr(at + 2))
    n = n > INT32_MAX ? n : n * 10 + (c - '0');
  if (n > INT32_MAX)
    return std::nullopt;
  return std::pair{ref.substr(0, at), static_cast<std::int32_t>(n)};
}

stored_ref split_stored_ref(std::string_view stored, const def_index& index) {
  stored_ref out;
  std::string_view base = stored;
  std::vector<std::int32_t> reversed;
  for (;;) {
    if (const auto* info = index.find(base)) {
      // Only a task nested that deep carries that many iterations in its name.
      if (reversed.empty() || info->depth == reversed.size() + 1) {
        out.info = info;
        out.outer.assign(reversed.rbegin(), reversed.rend());
      }
      return out;
    }
    auto split = split_iteration_suffix(base);
    if (!split)
      return out;
    reversed.push_back(split->second);
    base = split->first;
  }
}

loop_frame frame_of(const stored_ref& s, std::int32_t iteration) {
  loop_frame f;
  for (auto it : s.outer)
    f = f.inner(it);
  if (s.info != nullptr && s.info->depth > 0)
    f = f.inner(iteration);
  return f;
}

} // namespace nf::flow
