#pragma once

// A child process for the end-to-end suites: `nodeflow serve` or `nodeflow
// worker`, its stderr (and stdout unless captured) appended to a log file. The
// child gets SIGKILL when the test binary dies (PR_SET_PDEATHSIG), so a test
// that aborts on a failed CAF_REQUIRE still leaves no process behind; the
// destructor kills and reaps it otherwise.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace nf::test {

class child_process {
public:
  /// Starts `argv` (argv[0] a path). With `capture_stdout` the child's stdout is
  /// a pipe read by `wait_for_line`; else it goes to `log_path` too.
  child_process(std::vector<std::string> argv, const std::string& log_path,
                bool capture_stdout);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }

  /// The first stdout line starting with `prefix`, within `timeout`; nullopt
  /// when the child exits or the time is up first.
  std::optional<std::string> wait_for_line(const std::string& prefix,
                                           std::chrono::milliseconds timeout);

  /// Sends `sig` and, unless it is 0, waits (up to `patience`) for the child to
  /// exit; SIGKILL after that. Returns the wait status, or -1 if not reaped.
  int stop(int sig, std::chrono::milliseconds patience = std::chrono::seconds(20));

  /// True while the child has not exited (reaps it when it has).
  bool running();

  /// The exit status once it exited (after running() returned false or stop()).
  std::optional<int> status() const { return status_; }

private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffered_;
  std::optional<int> status_;
};

/// The last `max_bytes` of a file, for a failure message.
std::string tail_of(const std::string& path, size_t max_bytes = 4000);
/// The whole file ("" when it cannot be read).
std::string read_file(const std::string& path);

} // namespace nf::test
