#include "store/pg/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <utility>

#include <libpq-fe.h>

#include "store/pg/binary_params.hpp"
#include "proto/errors.hpp"
#include "store/pg/pruning.hpp"

namespace nf::store {

pipeline& pipeline::add(const statement& base, params p) {
  const statement& st = with_pruning_keys(base, p);
  return add_exact(st, std::move(p));
}

pipeline& pipeline::add_exact(const statement& st, params p) {
  items_.push_back(item{&st, std::move(p)});
  return *this;
}

namespace {

/// Reads results until the one that terminates the current query (NULL).
/// Returns the last non-null PGresult of that query (caller owns it).
PGresult* read_one(PGconn* c) {
  PGresult* last = nullptr;
  while (PGresult* r = PQgetResult(c)) {
    if (last)
      PQclear(last);
    last = r;
  }
  return last;
}

} // namespace

caf::expected<std::vector<result>> pipeline::run() {
  std::vector<result> done;
  return run(done);
}

caf::expected<std::vector<result>> pipeline::run(std::vector<result>& out) {
  out.clear();
  PGconn* c = conn_.native();
  if (PQenterPipelineMode(c) != 1)
    return make_error(errc::conn_broken, "cannot enter pipeline mode: " + conn_.last_error());
  // What the server will answer, in order: the deferred BEGIN and the COMMIT, whose results
  // are only checked, a statement's prepare or a superseded one's DEALLOCATE (by name), and
  // each statement's result.
  enum class kind { begin, prepare, deallocate, statement, commit };
  struct answer {
    kind k;
    const char* name = nullptr;
  };
  committed_ = false;
  std::vector<answer> answers;
  std::vector<const char*> newly_prepared;
  std::deque<std::string> deallocating;  // answers point into it: never moved
  bool send_failed = false;
  if (const char* begin = conn_.take_begin()) {
    if (PQsendQueryParams(c, begin, 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      send_failed = true;
    else
      answers.push_back({kind::begin});
  }
  for (auto& it : items_) {
    if (send_failed)
      break;
    if (!conn_.is_prepared(it.st->name)
        && std::find(newly_prepared.begin(), newly_prepared.end(), it.st->name)
             == newly_prepared.end()) {
      // An hour window's older variants are not run again (store/pg/hour_window.hpp): their
      // plans would stay in the backend for as long as the connection lives.
      for (auto& name : conn_.superseded_by(it.st->name)) {
        if (std::find(deallocating.begin(), deallocating.end(), name) != deallocating.end()
            || std::any_of(items_.begin(), items_.end(),
                           [&](const item& x) { return name == x.st->name; }))
          continue;
        auto sql = deallocate_sql(name);
        if (PQsendQueryParams(c, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
          send_failed = true;
          break;
        }
        deallocating.push_back(std::move(name));
        answers.push_back({kind::deallocate, deallocating.back().c_str()});
      }
      prepared_types types{*it.st};
      if (send_failed
          || PQsendPrepare(c, it.st->name, it.st->sql, types.count, types.types) != 1) {
        send_failed = true;
        break;
      }
      newly_prepared.push_back(it.st->name);
      answers.push_back({kind::prepare, it.st->name});
    }
    wire_params wire{*it.st, it.p};
    if (PQsendQueryPrepared(c, it.st->name, wire.count(), wire.values(), wire.lengths(),
                            wire.formats(), 0)
        != 1) {
      send_failed = true;
      break;
    }
    answers.push_back({kind::statement});
  }
  if (commit_ && !send_failed) {
    if (PQsendQueryParams(c, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      send_failed = true;
    else
      answers.push_back({kind::commit});
  }
  if (send_failed || PQpipelineSync(c) != 1) {
    auto err = make_error(errc::conn_broken, "pipeline send failed: " + conn_.last_error());
    PQexitPipelineMode(c);
    return err;
  }
  auto synced = std::chrono::steady_clock::now();
  out.reserve(items_.size());
  caf::error first_error;
  for (const auto& a : answers) {
    PGresult* r = read_one(c);
    auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_PIPELINE_ABORTED) {
      PQclear(r);
      continue;
    }
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      auto err = error_from(c, r, "pipeline");
      // 42P05: the server has it from an earlier batch whose answer never reached us.
      if (a.k == kind::prepare && sqlstate_of(err) == "42P05")
        conn_.mark_prepared(a.name);
      // 26000: the server does not have it.
      if (a.k == kind::deallocate && sqlstate_of(err) == "26000")
        conn_.forget_prepared(a.name);
      if (!first_error)
        first_error = std::move(err);
      PQclear(r);
      continue;
    }
    switch (a.k) {
      case kind::begin: PQclear(r); break;
      case kind::commit:
        // A COMMIT the server ran in a failed transaction answers ROLLBACK, without an error.
        committed_ = std::strcmp(PQcmdStatus(r), "COMMIT") == 0;
        if (!committed_ && !first_error)
          first_error = make_error(errc::internal, std::string{"pipeline: COMMIT answered "}
                                                     + PQcmdStatus(r));
        PQclear(r);
        break;
      case kind::prepare:
        // A prepared statement outlives the batch's transaction: once the server parsed
        // it, it exists even when a later statement aborts the batch, and a rerun of the
        // batch must not prepare it again.
        conn_.mark_prepared(a.name);
        PQclear(r);
        break;
      case kind::deallocate:
        conn_.forget_prepared(a.name);
        PQclear(r);
        break;
      case kind::statement: out.emplace_back(r); break;
    }
  }
  // The sync's own result closes the batch. After a COMMIT that succeeded, nothing it says
  // can undo the commit: the results stand (a broken link shows at the next use).
  if (PGresult* s = PQgetResult(c)) {
    if (PQresultStatus(s) != PGRES_PIPELINE_SYNC && !first_error && !committed_)
      first_error = error_from(c, s, "pipeline sync");
    PQclear(s);
  }
  conn_.add_waited_ms(
    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - synced).count());
  PQexitPipelineMode(c);
  if (first_error)
    return first_error;
  return std::move(out);
}

} // namespace nf::store
