#define CAF_SUITE flow.invalid
#include "caf/test/unit_test.hpp"

// The corpus in tests/flow/invalid/: each NN_name.json is run through
// `nodeflow validate` and must produce exactly the lines of NN_name.expected
// (without the "FILE: " prefix) and exit 1.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cmd/validate_command.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CAF_TEST(every invalid definition reports its exact path and message) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(NF_FLOW_TEST_DIR) / "invalid"))
    if (entry.path().extension() == ".json")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CAF_CHECK_GREATER_OR_EQUAL(files.size(), 40u);
  for (const auto& file : files) {
    CAF_MESSAGE(file.filename().string());
    auto expected_file = fs::path(file).replace_extension(".expected");
    CAF_CHECK(fs::exists(expected_file));
    std::ostringstream out, err;
    int rc = validate_files({file.string()}, out, err);
    CAF_CHECK_EQUAL(rc, 1);
    std::string got;
    std::istringstream lines(out.str());
    for (std::string line; std::getline(lines, line);) {
      auto prefix = file.string() + ": ";
      CAF_CHECK_EQUAL(line.rfind(prefix, 0), 0u);
      got += line.substr(std::min(prefix.size(), line.size())) + '\n';
    }
    CAF_CHECK_EQUAL(got, read_file(expected_file));
  }
}
