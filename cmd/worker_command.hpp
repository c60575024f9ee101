#pragma once

namespace nf::cmd {

/// `nodeflow worker --queue NAME... [--behavior echo|fail-first-attempt|sleep=MS]
/// [--concurrency N] [--max-tasks N] [--worker-id ID] [--node HOST:PORT]`:
/// a generic worker for demos and tests. Long-polls its queues, runs each
/// task per the behavior, completes or fails it with its lease token, logs
/// each task, and exits 0 after --max-tasks tasks or on SIGTERM/SIGINT.
int run_worker_command(int argc, char** argv);

} // namespace nf::cmd
