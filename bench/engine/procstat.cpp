#include "bench/engine/procstat.hpp"

#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>
#include <cstdlib>

namespace nf::bench {

namespace {

// Fields of /proc/PID/stat after the command name (which may hold spaces).
bool stat_fields(pid_t pid, std::vector<std::string>& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line))
    return false;
  auto close = line.rfind(')');
  if (close == std::string::npos)
    return false;
  std::istringstream rest(line.substr(close + 2));
  out.clear();
  for (std::string f; rest >> f;)
    out.push_back(f);
  return out.size() > 13;
}

std::optional<double> status_kb(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0)
      return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return std::nullopt;
}

} // namespace

std::optional<double> cpu_seconds(pid_t pid) {
  std::vector<std::string> f;
  if (!stat_fields(pid, f))
    return std::nullopt;
  // After the name: state(0) ppid(1) … utime(11) stime(12).
  double ticks = std::stod(f[11]) + std::stod(f[12]);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

pid_t parent_of(pid_t pid) {
  std::vector<std::string> f;
  if (!stat_fields(pid, f))
    return 0;
  return static_cast<pid_t>(std::stol(f[1]));
}

std::map<pid_t, double> tree_cpu(pid_t root) {
  std::map<pid_t, double> out;
  if (auto c = cpu_seconds(root))
    out[root] = *c;
  DIR* d = opendir("/proc");
  if (d == nullptr)
    return out;
  while (auto* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0)
      continue;
    if (parent_of(static_cast<pid_t>(pid)) == root)
      if (auto c = cpu_seconds(static_cast<pid_t>(pid)))
        out[static_cast<pid_t>(pid)] = *c;
  }
  closedir(d);
  return out;
}

double tree_cpu_delta(const std::map<pid_t, double>& before,
                      const std::map<pid_t, double>& after) {
  double sum = 0;
  for (const auto& [pid, c] : after) {
    auto it = before.find(pid);
    sum += it == before.end() ? c : c - it->second;
  }
  return sum;
}

bool reset_peak_rss(pid_t pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  if (!out)
    return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::optional<double> peak_rss_mb(pid_t pid) {
  return status_kb(pid, "VmHWM");
}

std::optional<double> rss_mb(pid_t pid) {
  return status_kb(pid, "VmRSS");
}

double load_average() {
  double l[3] = {0, 0, 0};
  getloadavg(l, 3);
  return l[0];
}

} // namespace nf::bench
