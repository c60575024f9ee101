#define CAF_SUITE config.settings
#include "caf/test/unit_test.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "config/settings.hpp"

using namespace nf::config;

CAF_TEST(defaults are valid values of their own settings) {
  auto v = values::defaults();
  for (const auto& s : all_settings()) {
    auto err = v.set(s.name, s.default_value, "default");
    CAF_CHECK(!err);
  }
  CAF_CHECK_EQUAL(v.get(keys::engine_partitions), 16);
  CAF_CHECK_EQUAL(v.get(keys::engine_nudges), true);
}

CAF_TEST(every key is declared once as a setting) {
  // all_settings() declares each setting from its key, so names and types agree by
  // construction; what is left is that no key is declared twice and none is left out.
  const auto& declared = all_settings();
  std::set<std::string> names;
  for (const auto& s : declared)
    if (!names.insert(s.name).second)
      CAF_FAIL("setting \"" << s.name << "\" is declared twice");
  // A constant of config::keys that all_settings() leaves out: count the header's.
  std::ifstream in{NF_SETTINGS_HPP};
  CAF_REQUIRE(in.good());
  size_t constants = 0;
  for (std::string line; std::getline(in, line);)
    constants += line.find("inline constexpr key<") != std::string::npos;
  CAF_CHECK_EQUAL(constants, declared.size());
}

CAF_TEST(a value is read back with the type of its key) {
  auto v = values::defaults();
  CAF_CHECK_EQUAL(v.get(keys::log_level), "info");
  CAF_CHECK_EQUAL(v.get(keys::lessor_lease_in_decision), true);
  CAF_CHECK(!v.set("engine.nudges", "false", "t"));
  CAF_CHECK(!v.set("relay.max_backoff_ms", "86400000", "t"));
  CAF_CHECK(!v.set("node.advertise", "h:1", "t"));
  CAF_CHECK_EQUAL(v.get(keys::engine_nudges), false);
  CAF_CHECK_EQUAL(v.get(keys::relay_max_backoff_ms), 86400000);
  CAF_CHECK_EQUAL(v.get(keys::node_advertise), "h:1");
}

CAF_TEST(wrong types and out of range values name the key and what was expected) {
  auto v = values::defaults();
  auto problems = load_text("decider.batch_size = 1.5\n"
                            "engine.nudges = yes\n"
                            "node.port = -3\n"
                            "no.such = 1\n"
                            "garbage line\n"
                            "log.level = \"loud\"\n",
                            "test.conf", v);
  CAF_REQUIRE_EQUAL(problems.size(), 6u);
  CAF_CHECK_EQUAL(problems[0], "test.conf:1: decider.batch_size: expected a whole number from 1 "
                               "to 10000, got \"1.5\"");
  CAF_CHECK_EQUAL(problems[1], "test.conf:2: engine.nudges: expected true or false, got \"yes\"");
  CAF_CHECK_EQUAL(problems[2],
                  "test.conf:3: node.port: expected a whole number from 0 to 65535, got \"-3\"");
  CAF_CHECK_EQUAL(problems[3], "test.conf:4: unknown setting \"no.such\"");
  CAF_CHECK_EQUAL(problems[4], "test.conf:5: expected `key = value`, got \"garbage line\"");
  CAF_CHECK_EQUAL(problems[5], "test.conf:6: log.level: expected trace, debug, info, warn, error "
                               "or off, got \"loud\"");
  // Rejected values leave the defaults in place.
  CAF_CHECK_EQUAL(v.get(keys::decider_batch_size), 128);
}

CAF_TEST(a renamed setting is refused naming its new name) {
  auto v = values::defaults();
  auto problems = load_text("maintenance.audit_months_retained = 24\n", "old.conf", v);
  CAF_REQUIRE_EQUAL(problems.size(), 1u);
  CAF_CHECK_EQUAL(problems[0], "old.conf:1: \"maintenance.audit_months_retained\" is now "
                               "\"retention.audit_months\": rename it (its value means the same)");
  CAF_CHECK_EQUAL(v.get(keys::retention_audit_months), 84);
  CAF_CHECK(!v.set("retention.audit_months", "24", "test"));
  CAF_CHECK_EQUAL(v.get(keys::retention_audit_months), 24);
}

CAF_TEST(a valid file overrides the defaults) {
  auto v = values::defaults();
  auto problems = load_text("# comment\n\nnode.port = 4600\ndb.dsn = \"postgresql://x@h/db\"\n",
                            "ok.conf", v);
  CAF_CHECK(problems.empty());
  CAF_CHECK_EQUAL(v.get(keys::node_port), 4600);
  CAF_CHECK_EQUAL(v.get(keys::db_dsn), "postgresql://x@h/db");
}

CAF_TEST(the checked-in reference config lists every setting with its default) {
  std::ifstream in{NF_REFERENCE_CONF};
  CAF_REQUIRE(in.good());
  std::stringstream buf;
  buf << in.rdbuf();
  auto file = buf.str();
  auto generated = reference_config();
  if (file != generated)
    CAF_MESSAGE("config/nodeflow.reference.conf is stale: regenerate it with "
                "`nodeflow config --reference > config/nodeflow.reference.conf`");
  CAF_CHECK(file == generated);
  // And it loads cleanly.
  auto v = values::defaults();
  CAF_CHECK(load_text(file, "reference", v).empty());
}
