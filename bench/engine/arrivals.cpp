#include "bench/engine/arrivals.hpp"

#include <chrono>
#include <cstdio>

namespace nf::bench {

int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

bool write_arrivals(const std::string& path, const std::vector<arrival>& arrivals) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr)
    return false;
  for (const auto& a : arrivals)
    std::fprintf(f, "%s %s %lld\n", a.workflow_id.c_str(), a.ref.c_str(),
                 static_cast<long long>(a.recv_ns));
  std::fclose(f);
  return true;
}

} // namespace nf::bench
