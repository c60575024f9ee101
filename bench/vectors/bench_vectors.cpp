// Vector search benchmark: DOCS documents of DIMS dimensions in one index, then top-10
// searches. Prints one JSON object per line: the load, the default (approximate without the
// `vector` extension) search's latency percentiles with its recall@10 against the exact
// ranking, and the exact search's latency.
//
//   bench_vectors --dsn DSN [--docs 100000] [--dims 384] [--queries 200]
//                 [--exact-queries 10] [--candidates 200] [--quick]
//
// The documents are clustered like real embeddings (1,000 centres, each document a centre
// plus noise; each query another noisy copy of a random centre), so that "the 10 nearest" is
// a question with an answer: uniformly random vectors are all about equally far apart.
// DSN names a Postgres 18 the benchmark may create a database on; it creates
// `nf_bench_vectors_<pid>`, migrates it, and drops it at the end.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "proto/errors.hpp"
#include "store/vectors.hpp"
#include "bench/support/bench_support.hpp"

using namespace nf;
using namespace nf::bench;
using namespace nf::store;

namespace {

double percentile(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  auto i = static_cast<size_t>(p * static_cast<double>(xs.size() - 1) + 0.5);
  return xs[std::min(i, xs.size() - 1)];
}

struct data_set {
  std::mt19937 rng{42};
  std::vector<std::vector<float>> centres;
  int dims;

  data_set(int centre_count, int d) : dims(d) {
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (int c = 0; c < centre_count; ++c) {
      std::vector<float> v(dims);
      for (auto& x : v)
        x = u(rng);
      centres.push_back(std::move(v));
    }
  }

  std::vector<float> near(size_t centre, float spread) {
    std::uniform_real_distribution<float> u(-spread / 2, spread / 2);
    auto v = centres[centre];
    for (auto& x : v)
      x += u(rng);
    return v;
  }
};

} // namespace

int main(int argc, char** argv) {
  bench::program = "bench_vectors";
  std::string dsn;
  int docs = 100000, dims = 384, queries = 200, exact_queries = 10;
  int candidates = default_vector_candidates;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--dsn" && i + 1 < argc)
      dsn = argv[++i];
    else if (a == "--docs")
      docs = next();
    else if (a == "--dims")
      dims = next();
    else if (a == "--queries")
      queries = next();
    else if (a == "--exact-queries")
      exact_queries = next();
    else if (a == "--candidates")
      candidates = next();
    else if (a == "--quick") {
      docs = 3000;
      dims = 64;
      queries = 20;
      exact_queries = 5;
    } else {
      std::fprintf(stderr, "usage: bench_vectors --dsn DSN [--docs N] [--dims D] [--queries Q] "
                           "[--exact-queries E] [--candidates C] [--quick]\n");
      return 2;
    }
  }
  if (dsn.empty() && std::getenv("NODEFLOW_DSN"))
    dsn = std::getenv("NODEFLOW_DSN");
  if (dsn.empty() || docs < 10 || dims < 1 || dims > max_vector_dimensions || queries < 1
      || exact_queries < 0 || exact_queries > queries || candidates < 10) {
    std::fprintf(stderr, "bench_vectors: need --dsn DSN (or NODEFLOW_DSN), --docs >= 10, "
                         "--dims 1-%d, --queries >= 1, --exact-queries <= queries, "
                         "--candidates >= 10\n",
                 max_vector_dimensions);
    return 2;
  }

  scratch_database db{dsn, "nf_bench_vectors_" + std::to_string(::getpid())};
  auto conn = db.connect_migrated();
  const bool extension = must(vector_extension_enabled(conn), "extension check");

  data_set data(1000, dims);
  auto t0 = clock_type::now();
  const int batch = 500;
  for (int first = 0; first < docs; first += batch) {
    std::vector<vector_document> ds;
    for (int i = first; i < std::min(docs, first + batch); ++i) {
      char id[16];
      std::snprintf(id, sizeof id, "doc%07d", i);
      ds.push_back({id, data.near(static_cast<size_t>(i) % data.centres.size(), 0.35f),
                    "{}", std::nullopt});
    }
    must(put_vector_documents(conn, default_namespace, "bench", ds), "put documents");
  }
  const double load_ms = ms_since(t0);
  must(conn.exec("VACUUM ANALYZE \"VectorDocuments\""), "vacuum");
  must(conn.exec("VACUUM ANALYZE \"VectorSignatures\""), "vacuum");
  std::printf("{\"bench\":\"vectors\",\"op\":\"load\",\"docs\":%d,\"dims\":%d,\"seconds\":%.1f,"
              "\"docs_per_s\":%.0f,\"extension\":%s}\n",
              docs, dims, load_ms / 1000, docs / (load_ms / 1000), extension ? "true" : "false");
  std::fflush(stdout);

  std::uniform_int_distribution<size_t> pick(0, data.centres.size() - 1);
  std::vector<std::vector<float>> qs;
  for (int q = 0; q < queries; ++q)
    qs.push_back(data.near(pick(data.rng), 0.3f));
  auto run = [&](const std::vector<float>& q, bool exact) {
    vector_query query{q, 10, exact, candidates, vector_backend::automatic};
    return must(search_vectors(conn, default_namespace, "bench", query), "search");
  };
  for (int w = 0; w < 3; ++w) // prepares the statements, warms the caches
    (void) run(qs[static_cast<size_t>(w) % qs.size()], false);

  std::vector<double> fast_ms;
  std::vector<std::vector<std::string>> fast_ids;
  bool approximate = false;
  for (const auto& q : qs) {
    auto t = clock_type::now();
    auto r = run(q, false);
    fast_ms.push_back(ms_since(t));
    approximate = approximate || !r.exact;
    std::vector<std::string> ids;
    for (const auto& h : r.hits)
      ids.push_back(h.id);
    fast_ids.push_back(std::move(ids));
  }
  std::vector<double> exact_ms;
  double found = 0, wanted = 0;
  for (int q = 0; q < exact_queries; ++q) {
    auto t = clock_type::now();
    auto r = run(qs[static_cast<size_t>(q)], true);
    exact_ms.push_back(ms_since(t));
    std::set<std::string> fast(fast_ids[static_cast<size_t>(q)].begin(),
                               fast_ids[static_cast<size_t>(q)].end());
    for (const auto& h : r.hits) {
      wanted += 1;
      found += fast.count(h.id) ? 1 : 0;
    }
  }
  std::printf("{\"bench\":\"vectors\",\"op\":\"search\",\"mode\":\"%s\",\"distance\":\"%s\","
              "\"docs\":%d,\"dims\":%d,\"limit\":10,\"candidates\":%d,\"queries\":%d,"
              "\"p50_ms\":%.1f,\"p99_ms\":%.1f,\"max_ms\":%.1f,\"recall_at_10\":%s}\n",
              approximate ? "approximate" : "exact", extension ? "vector" : "sql", docs, dims,
              candidates, queries, percentile(fast_ms, 0.5), percentile(fast_ms, 0.99),
              percentile(fast_ms, 1.0),
              wanted > 0 ? std::to_string(found / wanted).c_str() : "null");
  if (!exact_ms.empty())
    std::printf("{\"bench\":\"vectors\",\"op\":\"search\",\"mode\":\"exact\",\"distance\":\"%s\","
                "\"docs\":%d,\"dims\":%d,\"limit\":10,\"queries\":%d,\"p50_ms\":%.1f,"
                "\"max_ms\":%.1f}\n",
                extension ? "vector" : "sql", docs, dims, exact_queries,
                percentile(exact_ms, 0.5), percentile(exact_ms, 1.0));
  return 0;
}
