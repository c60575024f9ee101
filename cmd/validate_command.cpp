#include "cmd/validate_command.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "flow/parse.hpp"
#include "flow/validate.hpp"

namespace {

void check_definition(const boost::json::value& v, const std::string& path,
                      nf::flow::problems& errs) {
  const auto* obj = v.if_object();
  nf::flow::problems found;
  if (obj != nullptr && nf::flow::looks_like_workflow(*obj)) {
    auto def = nf::flow::read_workflow_def(v, path, found);
    auto more = nf::flow::validate(def, path);
    found.insert(found.end(), more.begin(), more.end());
  } else if (obj != nullptr) {
    auto def = nf::flow::read_task_def(v, path, found);
    auto more = nf::flow::validate(def, path);
    found.insert(found.end(), more.begin(), more.end());
  } else {
    found.push_back({path.empty() ? "$" : path,
                     "expected a task definition, a workflow definition or an array of them, "
                     "got "
                       + std::string(v.is_array() ? "a nested array" : "another JSON value")});
  }
  errs.insert(errs.end(), found.begin(), found.end());
}

nf::flow::problems check_file(const std::string& file) {
  nf::flow::problems errs;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    errs.push_back({"$", std::string("cannot read file: ") + std::strerror(errno)});
    return errs;
  }
  std::ostringstream text;
  text << in.rdbuf();
  boost::json::value doc;
  if (!nf::flow::parse_json(text.str(), doc, errs))
    return errs;
  if (const auto* arr = doc.if_array()) {
    for (std::size_t i = 0; i < arr->size(); ++i)
      check_definition((*arr)[i], nf::flow::path_index("", i), errs);
  } else {
    check_definition(doc, "", errs);
  }
  return errs;
}

}  // namespace

int validate_files(const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  if (files.empty()) {
    err << "usage: nodeflow validate FILE...\n";
    return 2;
  }
  bool ok = true;
  for (const auto& file : files)
    for (const auto& p : check_file(file)) {
      ok = false;
      out << file << ": " << nf::flow::to_string(p) << '\n';
    }
  if (ok)
    out << "ok\n";
  return ok ? 0 : 1;
}

int run_validate_command(int argc, char** argv) {
  return validate_files(std::vector<std::string>(argv, argv + argc), std::cout, std::cerr);
}
