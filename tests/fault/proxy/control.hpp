#pragma once

// The control protocol: one command per line, one reply line each, `ok ...`
// or `error <reason>`.
//
//   add NAME HOST:PORT            -> ok 127.0.0.1:PORT
//   set NAME pass|blackhole|reset|half-open|refuse|delay MS [JITTER_MS]|loss PCT -> ok
//   cut-after-commit NAME N       -> ok
//   stats NAME                    -> ok connections=N open=N bytes_up=N ...
//   links                         -> ok NAME=PORT->HOST:PORT ...
//   quit                          -> ok, then the proxy exits

#include <string>
#include <vector>

namespace nf::fault {

class proxy;

/// Runs one control line against the proxy and returns its reply line.
std::string execute(proxy& p, const std::string& line);

/// `nodeflow-fault-proxy ctl HOST:PORT words...`: sends one command, prints
/// the reply; 0 on `ok`, 1 on `error`, 2 when the proxy did not answer.
int run_ctl(const std::vector<std::string>& args);

} // namespace nf::fault
