#pragma once

// Where each task of a definition stands, by reference name. Built per call of
// decide() and of the snapshot operations; points into the definition, which
// must outlive it.

#include <cstddef>
#include <map>
#include <string_view>
#include <vector>

#include "flow/definitions.hpp"

namespace nf::flow {

struct task_info {
  const workflow_task* task = nullptr;
  const workflow_task* parent = nullptr;  ///< enclosing SWITCH / FORK_JOIN / DO_WHILE
  std::size_t branch = 0;                 ///< branch of `parent` when it is a FORK_JOIN
  const workflow_task* loop = nullptr;    ///< enclosing DO_WHILE, at any depth
  const std::vector<workflow_task>* block = nullptr;  ///< the list holding the task
  std::size_t index = 0;                  ///< its position in `block`
};

class def_index {
 public:
  explicit def_index(const workflow_def& def);

  const task_info* find(std::string_view ref) const;
  /// Every task inside a DO_WHILE's body, at any depth.
  const std::vector<const workflow_task*>& body(const workflow_task* loop) const;
  /// Every task in `tasks` and below.
  static void subtree(const std::vector<workflow_task>& tasks,
                      std::vector<const workflow_task*>& out);

 private:
  void add(const std::vector<workflow_task>& tasks, const workflow_task* parent,
           std::size_t branch, const workflow_task* loop);

  std::map<std::string_view, task_info, std::less<>> by_ref_;
  std::map<const workflow_task*, std::vector<const workflow_task*>> bodies_;
};

} // namespace nf::flow
