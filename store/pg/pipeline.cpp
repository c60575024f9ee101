#include "store/pg/pipeline.hpp"

#include <algorithm>

#include <libpq-fe.h>

#include "store/pg/errors.hpp"

namespace nf::store {

pipeline& pipeline::add(const statement& st, params p) {
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
  PGconn* c = conn_.native();
  if (PQenterPipelineMode(c) != 1)
    return make_error(errc::conn_broken, "cannot enter pipeline mode: " + conn_.last_error());
  // What the server will answer, in order: a prepare (false) or a statement (true).
  std::vector<bool> expects_rows;
  std::vector<const char*> newly_prepared;
  bool send_failed = false;
  for (auto& it : items_) {
    if (!conn_.is_prepared(it.st->name)
        && std::find(newly_prepared.begin(), newly_prepared.end(), it.st->name)
             == newly_prepared.end()) {
      if (PQsendPrepare(c, it.st->name, it.st->sql, 0, nullptr) != 1) {
        send_failed = true;
        break;
      }
      newly_prepared.push_back(it.st->name);
      expects_rows.push_back(false);
    }
    std::vector<const char*> values;
    values.reserve(it.p.size());
    for (const auto& v : it.p.values())
      values.push_back(v ? v->c_str() : nullptr);
    if (PQsendQueryPrepared(c, it.st->name, static_cast<int>(values.size()), values.data(),
                            nullptr, nullptr, 0)
        != 1) {
      send_failed = true;
      break;
    }
    expects_rows.push_back(true);
  }
  if (send_failed || PQpipelineSync(c) != 1) {
    auto err = make_error(errc::conn_broken, "pipeline send failed: " + conn_.last_error());
    PQexitPipelineMode(c);
    return err;
  }
  std::vector<result> out;
  out.reserve(items_.size());
  caf::error first_error;
  for (size_t i = 0; i < expects_rows.size(); ++i) {
    PGresult* r = read_one(c);
    auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_PIPELINE_ABORTED) {
      PQclear(r);
      continue;
    }
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      if (!first_error)
        first_error = error_from(c, r, "pipeline");
      PQclear(r);
      continue;
    }
    if (expects_rows[i])
      out.emplace_back(r);
    else
      PQclear(r);
  }
  // The sync's own result closes the batch.
  if (PGresult* s = PQgetResult(c)) {
    if (PQresultStatus(s) != PGRES_PIPELINE_SYNC && !first_error)
      first_error = error_from(c, s, "pipeline sync");
    PQclear(s);
  }
  PQexitPipelineMode(c);
  if (first_error)
    return first_error;
  for (auto* name : newly_prepared)
    conn_.mark_prepared(name);
  return out;
}

} // namespace nf::store
