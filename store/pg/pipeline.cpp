#include "store/pg/pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <libpq-fe.h>

#include "store/pg/binary_params.hpp"
#include "store/pg/errors.hpp"
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
  // What the server will answer, in order: a prepare (its name), a statement (nullptr),
  // the deferred BEGIN (`begin_answer`) or the COMMIT (`commit_answer`), whose results are
  // only checked.
  static const char begin_answer[] = "(deferred BEGIN)";
  static const char commit_answer[] = "(COMMIT)";
  committed_ = false;
  std::vector<const char*> answers;
  std::vector<const char*> newly_prepared;
  bool send_failed = false;
  if (const char* begin = conn_.take_begin()) {
    if (PQsendQueryParams(c, begin, 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      send_failed = true;
    else
      answers.push_back(begin_answer);
  }
  for (auto& it : items_) {
    if (send_failed)
      break;
    if (!conn_.is_prepared(it.st->name)
        && std::find(newly_prepared.begin(), newly_prepared.end(), it.st->name)
             == newly_prepared.end()) {
      if (PQsendPrepare(c, it.st->name, it.st->sql, 0, nullptr) != 1) {
        send_failed = true;
        break;
      }
      newly_prepared.push_back(it.st->name);
      answers.push_back(it.st->name);
    }
    wire_params wire{*it.st, it.p};
    if (PQsendQueryPrepared(c, it.st->name, wire.count(), wire.values(), wire.lengths(),
                            wire.formats(), 0)
        != 1) {
      send_failed = true;
      break;
    }
    answers.push_back(nullptr);
  }
  if (commit_ && !send_failed) {
    if (PQsendQueryParams(c, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      send_failed = true;
    else
      answers.push_back(commit_answer);
  }
  if (send_failed || PQpipelineSync(c) != 1) {
    auto err = make_error(errc::conn_broken, "pipeline send failed: " + conn_.last_error());
    PQexitPipelineMode(c);
    return err;
  }
  out.reserve(items_.size());
  caf::error first_error;
  for (const char* prepared_name : answers) {
    PGresult* r = read_one(c);
    auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_PIPELINE_ABORTED) {
      PQclear(r);
      continue;
    }
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      auto err = error_from(c, r, "pipeline");
      // 42P05: the server has it from an earlier batch whose answer never reached us.
      if (prepared_name && sqlstate_of(err) == "42P05")
        conn_.mark_prepared(prepared_name);
      if (!first_error)
        first_error = std::move(err);
      PQclear(r);
      continue;
    }
    // A prepared statement outlives the batch's transaction: once the server
    // parsed it, it exists even when a later statement aborts the batch, and a
    // rerun of the batch must not prepare it again.
    if (prepared_name == begin_answer) {
      PQclear(r);
    } else if (prepared_name == commit_answer) {
      // A COMMIT the server ran in a failed transaction answers ROLLBACK, without an error.
      committed_ = std::strcmp(PQcmdStatus(r), "COMMIT") == 0;
      if (!committed_ && !first_error)
        first_error = make_error(errc::internal, std::string{"pipeline: COMMIT answered "}
                                                   + PQcmdStatus(r));
      PQclear(r);
    } else if (prepared_name) {
      conn_.mark_prepared(prepared_name);
      PQclear(r);
    } else {
      out.emplace_back(r);
    }
  }
  // The sync's own result closes the batch. After a COMMIT that succeeded, nothing it says
  // can undo the commit: the results stand (a broken link shows at the next use).
  if (PGresult* s = PQgetResult(c)) {
    if (PQresultStatus(s) != PGRES_PIPELINE_SYNC && !first_error && !committed_)
      first_error = error_from(c, s, "pipeline sync");
    PQclear(s);
  }
  PQexitPipelineMode(c);
  if (first_error)
    return first_error;
  return std::move(out);
}

} // namespace nf::store
