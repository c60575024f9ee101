// nodeflow-catalog: reads the schema of a migrated database and writes the
// checked-in header store/schema/schema_catalog.hpp (see store/README.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "store/schema/catalog/catalog.hpp"
#include "store/pg/dsn.hpp"
#include "store/schema/migrator.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: nodeflow-catalog [--dsn DSN] [--fresh] --out FILE\n"
         "\n"
         "Writes FILE (store/schema/schema_catalog.hpp) from the catalog of a migrated database.\n"
         "  --dsn DSN  the database (default: NODEFLOW_DSN)\n"
         "  --fresh    DSN names a server: create a scratch database there, apply the\n"
         "             migrations built into this tool, read it, and drop it again\n"
         "FILE is rewritten only when its content changes.\n";
}

int fail(const std::string& what, const caf::error& err) {
  std::cerr << "nodeflow-catalog: " << what << ": " << nf::message_of(err) << "\n";
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  std::string dsn = std::getenv("NODEFLOW_DSN") ? std::getenv("NODEFLOW_DSN") : "";
  std::string out;
  bool fresh = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dsn" && i + 1 < argc) {
      dsn = argv[++i];
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--fresh") {
      fresh = true;
    } else if (a == "--help" || a == "-h") {
      usage(std::cout);
      return 0;
    } else {
      std::cerr << "nodeflow-catalog: unknown argument '" << a << "'\n";
      usage(std::cerr);
      return 2;
    }
  }
  if (dsn.empty() || out.empty()) {
    std::cerr << "nodeflow-catalog: " << (dsn.empty() ? "no DSN (--dsn or NODEFLOW_DSN)" : "no --out FILE")
              << "\n";
    usage(std::cerr);
    return 2;
  }
  std::string scratch;
  auto admin = nf::store::connection::open(dsn);
  if (!admin)
    return fail("connecting", admin.error());
  if (fresh) {
    scratch = "nodeflow_catalog_" + std::to_string(getpid());
    if (auto r = admin->exec("CREATE DATABASE \"" + scratch + "\""); !r)
      return fail("creating the scratch database " + scratch, r.error());
  }
  auto drop_scratch = [&] {
    if (!scratch.empty())
      (void) admin->exec("DROP DATABASE IF EXISTS \"" + scratch + "\" WITH (FORCE)");
  };
  int rc = [&] {
    auto conn = fresh ? nf::store::connection::open(nf::store::with_database(dsn, scratch))
                      : nf::store::connection::open(dsn);
    if (!conn)
      return fail("connecting", conn.error());
    if (fresh) {
      nf::store::migrator m;
      if (auto applied = m.up(*conn); !applied)
        return fail("migrating the scratch database", applied.error());
    }
    auto model = nf::store::catalog::read(*conn);
    if (!model)
      return fail("reading", model.error());
    if (std::none_of(model->tables.begin(), model->tables.end(),
                     [](const auto& t) { return t.name == "SchemaMigrations"; })) {
      std::cerr << "nodeflow-catalog: the database has no \"SchemaMigrations\" table, so it was "
                   "never migrated; run `nodeflow migrate` on it first, or pass --fresh\n";
      return 1;
    }
    auto text = nf::store::catalog::render(*model);
    std::ifstream in{out};
    std::stringstream old;
    old << in.rdbuf();
    if (in && old.str() == text) {
      std::cout << out << ": unchanged\n";
      return 0;
    }
    auto diff = nf::store::catalog::diff(old.str(), text, out + " (before)", out + " (now)");
    std::ofstream file{out, std::ios::trunc};
    file << text;
    if (!file.flush()) {
      std::cerr << "nodeflow-catalog: cannot write " << out << "\n";
      return 1;
    }
    std::cout << diff << out << ": written (" << model->tables.size() << " tables, "
              << model->indexes.size() << " indexes, " << model->enums.size() << " enum types, "
              << model->functions.size() << " functions)\n";
    return 0;
  }();
  drop_scratch();
  return rc;
}
