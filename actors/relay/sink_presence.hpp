#pragma once

// Whether the node's outbox relay had webhook sinks to deliver to when it last read them,
// shared with the node's decide committers. Without a sink an outbox hint starts no round
// (outbox_relay.cpp, hints_wanted), so the committers send none: at 200 one-task workflows
// a second that was three hand-offs per commit (committer, node, partition relay, outbox
// relay) for nothing. The relay reads its sinks again on its own poll, so a sink enabled
// later is noticed there and the hints resume (I9: they only make delivery sooner).

#include <atomic>

namespace nf::actors {

class sink_presence {
public:
  void note(bool any) { any_.store(any, std::memory_order_relaxed); }
  /// True until the relay has read its sinks once: unknown is treated as present.
  bool any() const { return any_.load(std::memory_order_relaxed); }

private:
  std::atomic<bool> any_{true};
};

} // namespace nf::actors
