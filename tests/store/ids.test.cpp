#define CAF_SUITE store.ids
#include "caf/test/unit_test.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "store/ids.hpp"

using nf::new_uuidv7;

namespace {

// The random tail: rand_b after the variant, the part the generator chooses.
std::string tail(const std::string& id) {
  return id.substr(19);
}

} // namespace

CAF_TEST(ids keep the uuidv7 layout and sort by creation time) {
  auto a = new_uuidv7();
  std::this_thread::sleep_for(std::chrono::milliseconds{2});
  auto b = new_uuidv7();
  CAF_CHECK(nf::is_uuidv7_text(a));
  CAF_CHECK(std::string{"89ab"}.find(a[19]) != std::string::npos); // RFC 9562 variant
  CAF_CHECK_LESS(a, b);
}

CAF_TEST(more ids than one buffer holds are all distinct) {
  std::set<std::string> tails;
  for (int i = 0; i < 5000; ++i)
    tails.insert(tail(new_uuidv7()));
  CAF_CHECK_EQUAL(tails.size(), 5000u);
}

CAF_TEST(a forked child does not repeat its parent s next ids) {
  new_uuidv7(); // the parent's buffer is filled before the fork
  int fds[2];
  CAF_REQUIRE_EQUAL(pipe(fds), 0);
  pid_t child = fork();
  CAF_REQUIRE(child >= 0);
  if (child == 0) {
    auto id = new_uuidv7();
    [[maybe_unused]] auto n = write(fds[1], id.data(), id.size());
    _exit(0);
  }
  close(fds[1]);
  auto mine = new_uuidv7();
  char buf[36];
  auto n = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  CAF_REQUIRE_EQUAL(n, 36);
  CAF_CHECK_NOT_EQUAL(tail(std::string{buf, 36}), tail(mine));
}
