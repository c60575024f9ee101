#pragma once

// What the benchmark reads from /proc: CPU seconds of a process (all its
// threads) and of a process tree (Postgres: the postmaster and its children),
// and the peak resident set of a process.

#include <map>
#include <optional>
#include <sys/types.h>

namespace nf::bench {

/// utime + stime of `pid` in seconds; nullopt when it cannot be read.
std::optional<double> cpu_seconds(pid_t pid);

/// CPU seconds per process of `root` and its direct children (a postmaster's backends).
std::map<pid_t, double> tree_cpu(pid_t root);

/// CPU used between two tree_cpu snapshots (processes that appeared count whole).
double tree_cpu_delta(const std::map<pid_t, double>& before, const std::map<pid_t, double>& after);

/// Parent pid of `pid`, 0 when unknown.
pid_t parent_of(pid_t pid);

/// Resets the kernel's peak-RSS mark of `pid` (VmHWM); false when not permitted.
bool reset_peak_rss(pid_t pid);

/// VmHWM / VmRSS of `pid` in MB; nullopt when it cannot be read.
std::optional<double> peak_rss_mb(pid_t pid);
std::optional<double> rss_mb(pid_t pid);

/// The 1-minute load average.
double load_average();

} // namespace nf::bench
