#include "tests/fault/harness/proxy.hpp"

#include <chrono>
#include <csignal>
#include <sstream>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nf::fault {

namespace {

uint16_t port_of(const std::string& host_port) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    throw std::runtime_error("expected HOST:PORT, got " + host_port);
  return static_cast<uint16_t>(std::stoi(host_port.substr(colon + 1)));
}

} // namespace

fault_proxy::fault_proxy(const std::string& bin, const std::string& log_path) : log_(log_path) {
  if (::access(bin.c_str(), X_OK) != 0)
    throw std::runtime_error("the fault proxy " + bin
                             + " is not built (cmake --build build --target nodeflow-fault-proxy)");
  proc_ = std::make_unique<test::child_process>(
    std::vector<std::string>{bin, "--control", "127.0.0.1:0"}, log_path, true);
  auto control = proc_->wait_for_line("control ", std::chrono::seconds(20));
  if (!control || !proc_->wait_for_line("ready", std::chrono::seconds(20)))
    throw std::runtime_error("the fault proxy did not print `control …` and `ready`: "
                             + test::tail_of(log_path));
  auto port = port_of(control->substr(8));
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
    throw std::runtime_error("cannot connect to the fault proxy's control port "
                             + std::to_string(port));
}

fault_proxy::~fault_proxy() {
  if (fd_ >= 0)
    ::close(fd_);
  if (proc_)
    proc_->stop(SIGTERM, std::chrono::seconds(5));
}

std::string fault_proxy::command(const std::string& line) {
  std::lock_guard<std::mutex> g{mx_};
  auto out = line + "\n";
  for (size_t sent = 0; sent < out.size();) {
    auto n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      throw std::runtime_error("the fault proxy's control port closed (" + line + ")");
    sent += static_cast<size_t>(n);
  }
  for (;;) {
    auto nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      auto reply = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      if (reply.rfind("ok", 0) == 0)
        return reply.size() > 3 ? reply.substr(3) : "";
      throw std::runtime_error("fault proxy: `" + line + "` answered `" + reply + "`");
    }
    char buf[4096];
    auto n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0)
      throw std::runtime_error("the fault proxy's control port closed (" + line + ")");
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

uint16_t fault_proxy::add(const std::string& name, const std::string& target) {
  return port_of(command("add " + name + " " + target));
}

void fault_proxy::set(const std::string& name, const std::string& mode) {
  command("set " + name + " " + mode);
}

void fault_proxy::cut_after_commit(const std::string& name, int n) {
  command("cut-after-commit " + name + " " + std::to_string(n));
}

std::vector<std::string> fault_proxy::sources(const std::string& name) {
  std::istringstream in{command("sources " + name)};
  std::vector<std::string> out;
  for (std::string s; in >> s;)
    out.push_back(s);
  return out;
}

std::map<std::string, int64_t> fault_proxy::stats(const std::string& name) {
  std::map<std::string, int64_t> out;
  std::istringstream in{command("stats " + name)};
  for (std::string kv; in >> kv;) {
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      out[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
  }
  return out;
}

} // namespace nf::fault
