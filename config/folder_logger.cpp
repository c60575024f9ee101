#include "config/folder_logger.hpp"

#include <mutex>

#include <spdlog/spdlog.h>

namespace nf {

std::shared_ptr<spdlog::logger> folder_logger(const std::string& name) {
  // Actors of several threads ask at once; register_logger throws on a duplicate.
  static std::mutex mtx;
  std::lock_guard<std::mutex> guard{mtx};
  if (auto existing = spdlog::get(name))
    return existing;
  auto created = spdlog::default_logger()->clone(name);
  spdlog::register_logger(created);
  return created;
}

} // namespace nf
