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
  const workflow_task* loop = nullptr;    ///< the innermost enclosing DO_WHILE
  std::size_t depth = 0;                  ///< how many DO_WHILEs enclose the task
  const std::vector<workflow_task>* block = nullptr;  ///< the list holding the task
  std::size_t index = 0;                  ///< its position in `block`
};

class def_index {
 public:
  explicit def_index(const workflow_def& def);

  const task_info* find(std::string_view ref) const;
  /// Every task inside a DO_WHILE's body, at any depth (nested loops' bodies too).
  const std::vector<const workflow_task*>& body(const workflow_task* loop) const;
  /// The tasks of a DO_WHILE's body that run in its iterations' frame: all but
  /// the bodies of loops nested in it, which run in frames of their own.
  const std::vector<const workflow_task*>& frame_body(const workflow_task* loop) const;
  /// Every task in `tasks` and below.
  static void subtree(const std::vector<workflow_task>& tasks,
                      std::vector<const workflow_task*>& out);
  /// Every task in `tasks` and below, without entering a DO_WHILE's `loopOver`.
  static void frame_subtree(const std::vector<workflow_task>& tasks,
                            std::vector<const workflow_task*>& out);

 private:
  void add(const std::vector<workflow_task>& tasks, const workflow_task* parent,
           std::size_t branch, const workflow_task* loop, std::size_t depth);

  std::map<std::string_view, task_info, std::less<>> by_ref_;
  std::map<const workflow_task*, std::vector<const workflow_task*>> bodies_;
  std::map<const workflow_task*, std::vector<const workflow_task*>> frame_bodies_;
};

} // namespace nf::flow
