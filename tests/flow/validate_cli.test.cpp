#define CAF_SUITE flow.validate_cli
#include "caf/test/unit_test.hpp"

#include <sstream>
#include <string>

#include "cmd/validate_command.hpp"

namespace {

const std::string dir = NF_FLOW_TEST_DIR;

}  // namespace

CAF_TEST(valid files print ok) {
  std::ostringstream out, err;
  CAF_CHECK_EQUAL(validate_files({dir + "/valid/order.json", dir + "/valid/tasks.json",
                                  dir + "/valid/approval.json"},
                                 out, err),
                  0);
  CAF_CHECK_EQUAL(out.str(), "ok\n");
  CAF_CHECK_EQUAL(err.str(), "");
}

CAF_TEST(problems of every file are listed) {
  std::ostringstream out, err;
  auto bad = dir + "/invalid/01_duplicate_reference.json";
  auto missing = dir + "/invalid/no_such_file.json";
  CAF_CHECK_EQUAL(validate_files({dir + "/valid/order.json", bad, missing}, out, err), 1);
  CAF_CHECK_EQUAL(out.str(), bad + ": tasks[1].taskReferenceName: duplicate reference name \"a\" "
                                  "(first used at tasks[0].taskReferenceName)\n"
                               + missing + ": $: cannot read file: No such file or directory\n");
}

CAF_TEST(no file is a usage error) {
  std::ostringstream out, err;
  CAF_CHECK_EQUAL(validate_files({}, out, err), 2);
  CAF_CHECK_EQUAL(out.str(), "");
  CAF_CHECK_EQUAL(err.str(), "usage: nodeflow validate FILE...\n");
}
