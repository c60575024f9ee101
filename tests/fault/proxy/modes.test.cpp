#define CAF_SUITE fault.proxy
#include "caf/test/unit_test.hpp"

#include <cerrno>
#include <cstdio>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fault/proxy/proxy_process.hpp"

using namespace nf::test;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

struct fixture {
  echo_server echo;
  proxy_process proxy{{"echo=127.0.0.1:" + std::to_string(echo.port())}};

  int open_link() {
    int fd = dial(proxy.link_port("echo"));
    CAF_REQUIRE(fd >= 0);
    return fd;
  }
  // A round trip through the link: what came back within `wait`.
  read_result echo_of(int fd, const std::string& bytes, milliseconds wait = milliseconds{2000}) {
    send_all(fd, bytes);
    return read_for(fd, wait, bytes.size());
  }
  void set(const std::string& mode) {
    CAF_REQUIRE_EQUAL(proxy.ctl("set echo " + mode), "ok");
  }
};

long long elapsed_ms(steady_clock::time_point since) {
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - since).count();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(fault_proxy_modes, fixture)

CAF_TEST(pass forwards both ways and counts the bytes) {
  int fd = open_link();
  CAF_CHECK_EQUAL(echo_of(fd, "hello").data, "hello");
  CAF_CHECK_EQUAL(proxy.ctl("stats echo"), "ok connections=1 open=1 bytes_up=5 bytes_down=5 "
                                           "cuts=0 resets=0 commits_seen=0");
  close(fd);
}

CAF_TEST(a large stream goes through intact in both directions) {
  int fd = open_link();
  std::string big(4 << 20, '\0');
  std::mt19937 rng{7};
  for (auto& c : big)
    c = static_cast<char>('0' + rng() % 10); // digits: never the echo server's "close"
  std::thread writer{[&] { send_all(fd, big); }};
  auto back = read_for(fd, milliseconds{10000}, big.size());
  writer.join();
  CAF_CHECK_EQUAL(back.data.size(), big.size());
  CAF_CHECK(back.data == big);
  close(fd);
}

CAF_TEST(blackhole holds both ways and keeps the connection open until pass) {
  int fd = open_link();
  CAF_REQUIRE_EQUAL(echo_of(fd, "a").data, "a");
  set("blackhole");
  auto held = echo_of(fd, "bc", milliseconds{400});
  CAF_CHECK_EQUAL(held.data, "");
  CAF_CHECK(!held.eof && held.error == 0);
  CAF_CHECK_EQUAL(echo.received(), 1u); // "bc" never reached the target
  int late = open_link(); // new connections are held too
  CAF_CHECK_EQUAL(echo_of(late, "d", milliseconds{300}).data, "");
  set("pass");
  CAF_CHECK_EQUAL(read_for(fd, milliseconds{2000}, 2).data, "bc");
  CAF_CHECK_EQUAL(read_for(late, milliseconds{2000}, 1).data, "d");
  close(fd);
  close(late);
}

CAF_TEST(a mode from one source address holds only the connections from there) {
  int a = dial(proxy.link_port("echo"), "127.0.0.1");
  int b = dial(proxy.link_port("echo"), "127.0.0.2");
  CAF_REQUIRE(a >= 0 && b >= 0);
  CAF_REQUIRE_EQUAL(echo_of(b, "x").data, "x");
  CAF_CHECK_EQUAL(proxy.ctl("sources echo"), "ok 127.0.0.1 127.0.0.2");
  set("blackhole from 127.0.0.2");
  CAF_CHECK_EQUAL(echo_of(a, "a").data, "a");
  CAF_CHECK_EQUAL(echo_of(b, "b", milliseconds{400}).data, "");
  int late_b = dial(proxy.link_port("echo"), "127.0.0.2"); // held from its first byte
  int late_a = dial(proxy.link_port("echo"), "127.0.0.1");
  CAF_CHECK_EQUAL(echo_of(late_b, "c", milliseconds{300}).data, "");
  CAF_CHECK_EQUAL(echo_of(late_a, "d").data, "d");
  set("pass from 127.0.0.2");
  CAF_CHECK_EQUAL(read_for(b, milliseconds{2000}, 1).data, "b");
  CAF_CHECK_EQUAL(read_for(late_b, milliseconds{2000}, 1).data, "c");
  set("reset from 127.0.0.2"); // resets that source's open connections, and no other
  CAF_CHECK_EQUAL(read_for(b, milliseconds{2000}, 1).error, ECONNRESET);
  CAF_CHECK_EQUAL(echo_of(a, "e").data, "e");
  set("blackhole from 127.0.0.1");
  set("pass"); // the link's own mode replaces every per-source one
  CAF_CHECK_EQUAL(echo_of(a, "f").data, "f");
  for (int fd : {a, b, late_a, late_b})
    close(fd);
}

CAF_TEST(reset sends an RST on open and new connections) {
  int fd = open_link();
  CAF_REQUIRE_EQUAL(echo_of(fd, "a").data, "a");
  set("reset");
  auto r = read_for(fd, milliseconds{2000});
  CAF_CHECK_EQUAL(r.error, ECONNRESET);
  int late = open_link();
  CAF_CHECK_EQUAL(read_for(late, milliseconds{2000}).error, ECONNRESET);
  CAF_CHECK_EQUAL(proxy.ctl("stats echo"), "ok connections=2 open=0 bytes_up=1 bytes_down=1 "
                                           "cuts=0 resets=2 commits_seen=0");
  set("pass");
  int again = open_link();
  CAF_CHECK_EQUAL(echo_of(again, "z").data, "z");
  close(fd);
  close(late);
  close(again);
}

CAF_TEST(half-open forwards to the target and never tells the client anything) {
  // In pass, the target closing shows as EOF to the client...
  int fd = open_link();
  send_all(fd, "close");
  CAF_CHECK(read_for(fd, milliseconds{2000}).eof);
  close(fd);
  // ...in half-open the client's bytes arrive, but neither echo nor EOF comes back.
  fd = open_link();
  CAF_REQUIRE_EQUAL(echo_of(fd, "a").data, "a");
  set("half-open");
  auto before = echo.received();
  auto r = echo_of(fd, "ping", milliseconds{400});
  CAF_CHECK_EQUAL(r.data, "");
  CAF_CHECK_EQUAL(echo.received(), before + 4);
  send_all(fd, "close");
  r = read_for(fd, milliseconds{400});
  CAF_CHECK(r.data.empty() && !r.eof && r.error == 0);
  CAF_CHECK_EQUAL(echo.received(), before + 9);
  close(fd);
}

CAF_TEST(delay holds every chunk each way and keeps their order) {
  int fd = open_link();
  auto start = steady_clock::now();
  CAF_REQUIRE_EQUAL(echo_of(fd, "a").data, "a");
  CAF_CHECK_LESS(elapsed_ms(start), 300);
  set("delay 150 20");
  start = steady_clock::now();
  for (auto chunk : {"1", "2", "3", "4"}) {
    send_all(fd, chunk);
    std::this_thread::sleep_for(milliseconds{5});
  }
  CAF_CHECK_EQUAL(read_for(fd, milliseconds{3000}, 4).data, "1234");
  auto took = elapsed_ms(start);
  CAF_CHECK_GREATER_OR_EQUAL(took, 300); // 150 ms up, 150 ms down
  CAF_CHECK_LESS(took, 1500);
  close(fd);
}

CAF_TEST(loss holds chunks back as retransmissions and keeps their order) {
  int fd = open_link();
  set("loss 100");
  // Every chunk is lost once: 200 ms up, then 200 ms down.
  auto start = steady_clock::now();
  CAF_CHECK_EQUAL(echo_of(fd, "x", milliseconds{3000}).data, "x");
  CAF_CHECK_GREATER_OR_EQUAL(elapsed_ms(start), 380);
  // Losses in a row back off: on a fresh connection the first chunk leaves
  // after 200 ms, the second 400 ms later, and their echoes come back as late.
  close(fd);
  fd = open_link();
  start = steady_clock::now();
  send_all(fd, "1");
  std::this_thread::sleep_for(milliseconds{5});
  send_all(fd, "2");
  CAF_CHECK_EQUAL(read_for(fd, milliseconds{4000}, 2).data, "12");
  CAF_CHECK_GREATER_OR_EQUAL(elapsed_ms(start), 950);
  set("loss 0");
  start = steady_clock::now();
  CAF_CHECK_EQUAL(echo_of(fd, "y").data, "y");
  CAF_CHECK_LESS(elapsed_ms(start), 350); // a loss each way would take 400 ms
  close(fd);
}

CAF_TEST(refuse closes new connections and leaves open ones alone) {
  int fd = open_link();
  CAF_REQUIRE_EQUAL(echo_of(fd, "a").data, "a");
  set("refuse");
  int late = dial(proxy.link_port("echo"));
  auto r = read_for(late, milliseconds{2000});
  CAF_CHECK(r.eof || r.error != 0);
  CAF_CHECK_EQUAL(echo_of(fd, "b").data, "b");
  CAF_CHECK_EQUAL(echo.received(), 2u);
  close(late);
  close(fd);
}

CAF_TEST(add makes a link on a free port and links lists them) {
  auto reply = proxy.ctl("add second 127.0.0.1:" + std::to_string(echo.port()));
  CAF_REQUIRE_EQUAL(reply.rfind("ok 127.0.0.1:", 0), 0u);
  auto port = static_cast<std::uint16_t>(std::stoul(reply.substr(reply.rfind(':') + 1)));
  int fd = dial(port);
  CAF_REQUIRE(fd >= 0);
  CAF_CHECK_EQUAL(echo_of(fd, "via second").data, "via second");
  auto target = "127.0.0.1:" + std::to_string(echo.port());
  CAF_CHECK_EQUAL(proxy.ctl("links"), "ok echo=" + std::to_string(proxy.link_port("echo")) + "->"
                                          + target + " second=" + std::to_string(port) + "->"
                                          + target);
  close(fd);
}

CAF_TEST(a link whose target is down resets its clients) {
  auto reply = proxy.ctl("add down 127.0.0.1:1"); // nothing listens on port 1
  CAF_REQUIRE_EQUAL(reply.rfind("ok 127.0.0.1:", 0), 0u);
  for (int i = 0; i < 3; ++i) {
    int fd = dial(static_cast<std::uint16_t>(std::stoul(reply.substr(reply.rfind(':') + 1))));
    CAF_REQUIRE(fd >= 0);
    // No send first: a send racing the RST would take the reset and leave the read an EOF.
    CAF_CHECK_EQUAL(read_for(fd, milliseconds{2000}).error, ECONNRESET);
    close(fd);
  }
}

CAF_TEST(bad commands get an error naming what is wrong) {
  CAF_CHECK_EQUAL(proxy.ctl("set nope pass"), "error no link named 'nope'");
  CAF_CHECK_EQUAL(proxy.ctl("set echo warp"),
                  "error unknown mode 'warp' (pass, blackhole, reset, half-open, delay, loss, "
                  "refuse)");
  CAF_CHECK_EQUAL(proxy.ctl("set echo loss 101"), "error loss takes PCT, a whole number from 0 "
                                                  "to 100");
  CAF_CHECK_EQUAL(proxy.ctl("add far 10.0.0.1:5432"),
                  "error add target: address '10.0.0.1:5432' is not loopback (only 127.0.0.0/8 "
                  "and ::1 are allowed)");
  CAF_CHECK_EQUAL(proxy.ctl("add echo 127.0.0.1:1"), "error link echo already exists");
  CAF_CHECK_EQUAL(proxy.ctl("cut-after-commit echo x"),
                  "error cut-after-commit takes NAME N, N a whole number from 0 to 1000000");
  CAF_CHECK_EQUAL(proxy.ctl("frobnicate"), "error unknown command 'frobnicate' (add, set, "
                                           "cut-after-commit, stats, sources, links, "
                                           "quit)");
  CAF_CHECK_EQUAL(proxy.ctl("set echo blackhole from 10.0.0.1"),
                  "error set echo: `from` takes one loopback address last, e.g. from 127.0.0.11");
  CAF_CHECK_EQUAL(proxy.ctl("set echo blackhole from"),
                  "error set echo: `from` takes one loopback address last, e.g. from 127.0.0.11");
  CAF_CHECK_EQUAL(proxy.ctl("set echo from 127.0.0.2"),
                  "error set needs a mode: pass, blackhole, reset, half-open, delay MS "
                  "[JITTER_MS], loss PCT or refuse");
}

CAF_TEST(ctl sends one command from the shell and quit stops the proxy) {
  auto run = [&](const std::string& words, std::string& out) {
    auto cmd = std::string{NF_FAULT_PROXY_BIN} + " ctl 127.0.0.1:"
               + std::to_string(proxy.control_port()) + " " + words;
    auto* p = popen(cmd.c_str(), "r");
    char buf[512];
    out.clear();
    while (auto n = fread(buf, 1, sizeof buf, p))
      out.append(buf, n);
    return WEXITSTATUS(pclose(p));
  };
  std::string out;
  CAF_CHECK_EQUAL(run("set echo delay 10", out), 0);
  CAF_CHECK_EQUAL(out, "ok\n");
  CAF_CHECK_EQUAL(run("set echo", out), 1);
  CAF_CHECK_EQUAL(out.rfind("error set needs a mode", 0), 0u);
  CAF_CHECK_EQUAL(run("quit", out), 0);
  CAF_CHECK(proxy.exited_within(milliseconds{2000}));
}

CAF_TEST(only loopback is served) {
  auto start = [](const std::string& args) {
    return WEXITSTATUS(std::system((std::string{NF_FAULT_PROXY_BIN} + " " + args
                                    + " >/dev/null 2>&1").c_str()));
  };
  CAF_CHECK_EQUAL(start("--control 0.0.0.0:0"), 2);
  CAF_CHECK_EQUAL(start("--control 127.0.0.1:0 --link pg=192.168.1.1:5432"), 2);
  CAF_CHECK_EQUAL(start("--control 127.0.0.1:0 --link pg"), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
