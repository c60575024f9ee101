// nodeflow-idle-clients: opens thousands of long polls and history streams against a node's
// HTTP door and never reads them, while a normal client starts one-task workflows (W1's
// start call) on a few kept-alive connections; prints, as one JSON line, the node's resident
// memory and the normal client's start latency p50/p99, alone and beside the idle clients.
//
//   nodeflow-idle-clients --http 127.0.0.1:8080 --pid NODE_PID [--idle 10000]
//                         [--starts 2000] [--conns 8] [--queues 8] [--polls-only]
//                         [--hold-s N]
//
// --polls-only: every idle client is a poll. --hold-s N: keeps them open N seconds (at most
// 55: a poll waits 60 s at most) and says so on stderr ("idle clients open", then "closing"),
// for bench/idle/run to measure what parked polls cost a node that does nothing else;
// --starts 0 then skips the start measurements.
//
// Half of --idle are polls (spread over --queues queues, each waiting the longest a poll may,
// so they stay parked for the run), half are streams of one workflow that never ends; every
// one of them sets a small receive buffer and reads nothing. The node needs auth off (or a
// loopback door without credentials): nothing here presents a token.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

namespace {

struct options {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  int pid = 0;
  int idle = 10000;
  int starts = 2000;
  bool polls_only = false;
  int hold_s = 0;
  int conns = 8;
  int queues = 8;
};

[[noreturn]] void die(const std::string& why) {
  std::cerr << "nodeflow-idle-clients: " << why << "\n";
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--polls-only") {
      o.polls_only = true;
      continue;
    }
    if (i + 1 >= argc)
      die(a + ": expected a value after it");
    std::string v = argv[++i];
    if (a == "--http") {
      auto colon = v.rfind(':');
      if (colon == std::string::npos)
        die("--http: expected HOST:PORT, got " + v);
      o.host = v.substr(0, colon);
      o.port = static_cast<uint16_t>(std::atoi(v.c_str() + colon + 1));
    } else if (a == "--pid") {
      o.pid = std::atoi(v.c_str());
    } else if (a == "--idle") {
      o.idle = std::atoi(v.c_str());
    } else if (a == "--hold-s") {
      o.hold_s = std::atoi(v.c_str());
      if (o.hold_s < 0 || o.hold_s > 55)
        die("--hold-s: expected 0 … 55 seconds, got " + v);
    } else if (a == "--starts") {
      o.starts = std::atoi(v.c_str());
    } else if (a == "--conns") {
      o.conns = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--queues") {
      o.queues = std::max(1, std::atoi(v.c_str()));
    } else {
      die("unknown option " + a);
    }
  }
  if (o.pid <= 0)
    die("--pid: the node's process id is required (its memory is read from /proc)");
  return o;
}

// Each idle client holds a descriptor here and one in the node.
void raise_open_files_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

double rss_mb(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::atof(line.c_str() + 6) / 1024.0;
  die("cannot read the memory of process " + std::to_string(pid));
}

int connect_to(const options& o, int rcvbuf = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    die(std::string{"socket: "} + std::strerror(errno));
  if (rcvbuf > 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(o.port);
  if (::inet_pton(AF_INET, o.host.c_str(), &a.sin_addr) != 1)
    die("--http: expected an IPv4 address, got " + o.host);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die(std::string{"connect: "} + std::strerror(errno));
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    auto k = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (k <= 0)
      die(std::string{"send: "} + std::strerror(errno));
    off += static_cast<size_t>(k);
  }
}

// One request on a kept-alive connection and its answer (Content-Length bodies only, which
// is what the node's JSON answers carry): status and body.
std::pair<int, std::string> exchange(int fd, const std::string& method, const std::string& target,
                                     const std::string& body) {
  send_all(fd, method + " " + target + " HTTP/1.1\r\nHost: bench\r\nContent-Type: "
                 "application/json\r\nContent-Length: " + std::to_string(body.size())
                 + "\r\n\r\n" + body);
  std::string in;
  char buf[8192];
  size_t head_end = std::string::npos;
  size_t need = 0;
  for (;;) {
    auto k = ::recv(fd, buf, sizeof buf, 0);
    if (k <= 0)
      die("the node closed a connection of the normal client");
    in.append(buf, static_cast<size_t>(k));
    if (head_end == std::string::npos) {
      head_end = in.find("\r\n\r\n");
      if (head_end == std::string::npos)
        continue;
      auto lower = in.substr(0, head_end);
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      auto cl = lower.find("content-length:");
      need = cl == std::string::npos ? 0 : std::strtoul(lower.c_str() + cl + 15, nullptr, 10);
    }
    if (in.size() >= head_end + 4 + need)
      break;
  }
  int status = std::atoi(in.c_str() + 9);
  return {status, in.substr(head_end + 4, need)};
}

const char* task_defs = R"([{"name": "idle_bench_task", "retryCount": 0,
  "responseTimeoutSeconds": 3600}])";
const char* workflow_def = R"({"name": "idle_bench", "version": 1, "schemaVersion": 2,
  "tasks": [{"name": "idle_bench_task", "taskReferenceName": "t", "type": "SIMPLE"}]})";

struct latencies {
  double p50 = 0;
  double p99 = 0;
  int failed = 0;
};

// `n` starts over `conns` connections at once, one call in flight on each.
latencies measure(const options& o, int n) {
  if (n <= 0)
    return {};
  std::vector<double> ms;
  std::mutex mx;
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> ts;
  for (int c = 0; c < o.conns; ++c)
    ts.emplace_back([&] {
      int fd = connect_to(o);
      std::vector<double> mine;
      while (next.fetch_add(1) < n) {
        auto t0 = std::chrono::steady_clock::now();
        auto [status, body] = exchange(fd, "POST", "/api/workflow/idle_bench?version=1", "{}");
        auto t1 = std::chrono::steady_clock::now();
        if (status != 200)
          ++failed;
        mine.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      ::close(fd);
      std::lock_guard lock{mx};
      ms.insert(ms.end(), mine.begin(), mine.end());
    });
  for (auto& t : ts)
    t.join();
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms.empty() ? 0.0 : ms[static_cast<size_t>(q * (ms.size() - 1))]; };
  return {at(0.50), at(0.99), failed.load()};
}

} // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  raise_open_files_limit();
  {
    int fd = connect_to(o);
    exchange(fd, "POST", "/api/metadata/taskdefs", task_defs);
    auto [st, body] = exchange(fd, "POST", "/api/metadata/workflow", workflow_def);
    if (st != 200 && st != 409)
      die("registering the bench's workflow: HTTP " + std::to_string(st) + " " + body);
    ::close(fd);
  }
  if (o.starts > 0)
    measure(o, std::min(o.starts, 200)); // warm-up
  auto rss_alone = rss_mb(o.pid);
  auto alone = measure(o, o.starts);
  auto rss_after_alone = rss_mb(o.pid);

  // The stream's workflow: its task is never polled (the polls below are on other queues).
  int fd = connect_to(o);
  auto [st, id] = exchange(fd, "POST", "/api/workflow/idle_bench?version=1", "{}");
  ::close(fd);
  if (st != 200)
    die("starting the streams' workflow: HTTP " + std::to_string(st) + " " + id);
  std::vector<int> idle;
  int polls = o.polls_only ? o.idle : o.idle / 2;
  int streams = o.idle - polls;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.idle; ++i) {
    int c = connect_to(o, 4096);
    if (i < polls)
      send_all(c, "GET /api/tasks/poll/batch/idle_bench_q" + std::to_string(i % o.queues)
                    + "?count=1&timeout=60000&workerid=idle HTTP/1.1\r\nHost: bench\r\n\r\n");
    else
      send_all(c, "GET /api/workflow/" + id + "/events/stream HTTP/1.1\r\nHost: bench\r\n\r\n");
    idle.push_back(c);
  }
  auto opened_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // What the node refused at once (503: beyond its caps) shows without reading further.
  int refused = 0;
  for (int c : idle) {
    char head[13] = {};
    if (::recv(c, head, 12, MSG_PEEK | MSG_DONTWAIT) == 12 && std::strstr(head, " 503") != nullptr)
      ++refused;
  }
  auto rss_idle = rss_mb(o.pid);
  if (o.hold_s > 0) {
    std::cerr << "idle clients open" << std::endl;
    std::this_thread::sleep_for(std::chrono::seconds(o.hold_s));
    std::cerr << "closing" << std::endl;
  }
  auto beside = measure(o, o.starts);
  auto rss_end = rss_mb(o.pid);
  for (int c : idle)
    ::close(c);

  boost::json::object out{{"bench", "idle_clients"},
                          {"idle_polls", polls},
                          {"idle_streams", streams},
                          {"idle_opened_s", opened_s},
                          {"idle_refused", refused},
                          {"starts", o.starts},
                          {"conns", o.conns},
                          {"alone_p50_ms", alone.p50},
                          {"alone_p99_ms", alone.p99},
                          {"alone_failed", alone.failed},
                          {"idle_p50_ms", beside.p50},
                          {"idle_p99_ms", beside.p99},
                          {"idle_failed", beside.failed},
                          {"node_rss_mb_alone", rss_alone},
                          {"node_rss_mb_after_alone", rss_after_alone},
                          {"node_rss_mb_idle_open", rss_idle},
                          {"node_rss_mb_end", rss_end}};
  std::cout << boost::json::serialize(out) << std::endl;
  return 0;
}
