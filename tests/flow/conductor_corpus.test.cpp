#define CAF_SUITE flow.conductor_corpus
#include "caf/test/unit_test.hpp"

// `nodeflow validate` over tests/conductor_corpus: Conductor workflow definitions in the
// forms Conductor exports them and its SDKs build them. expectations.txt lists the files
// that must be refused (task types nodeflow cannot run), each with what its problems
// must say; every other file must validate.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/validate_command.hpp"
#include "tests/support/check_saying.hpp"

namespace {

namespace fs = std::filesystem;

const std::string corpus = NF_CONDUCTOR_CORPUS_DIR;

struct expectation {
  std::string kind;                  // "refused"
  std::vector<std::string> reasons;  // every problem line holds one of them
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep))
    if (!part.empty())
      out.push_back(part);
  return out;
}

// "file<TAB>kind<TAB>reason|reason…" per line; '#' starts a comment.
std::map<std::string, expectation> read_expectations() {
  std::map<std::string, expectation> out;
  std::ifstream in(corpus + "/expectations.txt");
  CAF_REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    auto cols = split(line, '\t');
    CAF_REQUIRE_EQUAL(cols.size(), 3u);
    CAF_REQUIRE(cols[1] == "refused");
    out[cols[0]] = {cols[1], split(cols[2], '|')};
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  return split(text, '\n');
}

}  // namespace

CAF_TEST(every conductor definition validates or is refused for a stated reason) {
  auto expected = read_expectations();
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(corpus))
    if (e.path().extension() == ".json")
      files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  for (const auto& [file, _] : expected)
    CHECK_SAYING(std::find(files.begin(), files.end(), file) != files.end(),
                      "expectations.txt names a missing file " << file);
  int valid = 0, refused = 0;
  for (const auto& file : files) {
    std::ostringstream out, err;
    int rc = validate_files({corpus + "/" + file}, out, err);
    auto it = expected.find(file);
    if (it == expected.end()) {
      CHECK_SAYING(rc == 0, file << " should validate:\n" << out.str());
      valid += rc == 0;
      continue;
    }
    const auto& want = it->second;
    CHECK_SAYING(rc == 1, file << " should be refused");
    refused += 1;
    for (const auto& line : lines_of(out.str())) {
      // "FILE: path: message": a refusal names the field (or the task's type) it is about.
      auto rest = line.substr(std::min(line.size(), corpus.size() + file.size() + 3));
      auto colon = rest.find(": ");
      CHECK_SAYING(colon != std::string::npos && colon > 0 && rest.substr(0, colon) != "$",
                        file << ": the problem names no field: " << line);
      bool explained = std::any_of(want.reasons.begin(), want.reasons.end(),
                                   [&](const std::string& r) {
                                     return line.find(r) != std::string::npos;
                                   });
      CHECK_SAYING(explained, file << ": unexpected problem: " << line);
    }
  }
  int total = static_cast<int>(files.size());
  CAF_MESSAGE("conductor corpus: " << total << " definitions, " << valid << " validate, "
                                   << refused << " refused");
  std::cout << "conductor corpus: " << total << " definitions, " << valid << " validate, "
            << refused << " refused\n";
  CAF_CHECK_GREATER_OR_EQUAL(total, 60);
  CAF_CHECK_GREATER_OR_EQUAL(refused, 3);
  CAF_CHECK_GREATER_OR_EQUAL(valid * 100, total * 95);
}
