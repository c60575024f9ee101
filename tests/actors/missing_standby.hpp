#pragma once

// The settings actors.in_doubt needs for a commit whose answer is lost after it
// committed: a synchronous standby named server-wide that never connects.

#include <chrono>
#include <string>
#include <thread>

#include "caf/test/unit_test.hpp"

#include "proto/errors.hpp"
#include "store/pg/connection.hpp"

namespace nf::test {

// Server settings for the committed case, reset on every way out of the test.
// A reload reaches each backend on its own time, at its next command: the standby is
// named only once `local` has reached a fresh session and the test's own ones, or a
// session still on the old `on` would wait for it forever.
struct missing_standby {
  store::connection admin;
  missing_standby(const std::string& dsn, store::connection& own) : admin{open(dsn)} {
    set("ALTER SYSTEM SET synchronous_commit = 'local'");
    set("SELECT pg_reload_conf()");
    for (int i = 0;; ++i) {
      auto fresh = open(dsn);
      if (local(fresh) && local(admin) && local(own))
        break;
      if (i == 200)
        CAF_FAIL("synchronous_commit = local never reached the sessions");
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    set("ALTER SYSTEM SET synchronous_standby_names = 'nf_absent_standby'");
    set("SELECT pg_reload_conf()");
  }
  ~missing_standby() {
    reset(admin);
  }
  /// Also run by actors.standby_reset after the suite: a suite aborted by its watchdog
  /// skips destructors, and a standby left named holds every commit that asks for it.
  static bool reset(store::connection& c) {
    return c.exec("ALTER SYSTEM RESET synchronous_standby_names")
           && c.exec("ALTER SYSTEM RESET synchronous_commit")
           && c.exec("SELECT pg_reload_conf()");
  }
  static store::connection open(const std::string& dsn) {
    auto c = store::connection::open(dsn);
    if (!c)
      CAF_FAIL("connect: " << nf::message_of(c.error()));
    return std::move(*c);
  }
  static bool local(store::connection& c) {
    auto r = c.exec("SHOW synchronous_commit");
    return r && r->text(0, 0) == "local";
  }
  void set(const char* sql) {
    if (auto r = admin.exec(sql); !r)
      CAF_FAIL(sql << ": " << nf::message_of(r.error()));
  }
};

} // namespace nf::test
