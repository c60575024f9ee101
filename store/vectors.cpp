#include "store/vectors.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "store/json.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

namespace {

constexpr statement index_locked{"vectors.index_locked", R"(
SELECT i."dimensions" FROM "VectorIndexes" i
 WHERE i."namespaceId" = $1::uuid AND i."name" = $2 FOR KEY SHARE)"};

// DO NOTHING waits for a concurrent creator of the same index; the caller reads it again.
constexpr statement index_create{"vectors.index_create", R"(
INSERT INTO "VectorIndexes" ("namespaceId", "name", "dimensions")
VALUES ($1::uuid, $2, $3::integer) ON CONFLICT ("namespaceId", "name") DO NOTHING)"};

constexpr statement index_read{"vectors.index_read", R"(
SELECT i."dimensions", EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS extension
  FROM "VectorIndexes" i WHERE i."namespaceId" = $1::uuid AND i."name" = $2)"};

constexpr statement extension_enabled{"vectors.extension", R"(
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS extension)"};

// A document and its signature in one statement: the signature's foreign key is checked at
// the statement's end, when the document row exists.
constexpr statement documents_put{"vectors.documents_put", R"(
WITH u AS (
  SELECT u.id, u.e::real[] AS e, u.s::varbit AS s, u.m, u.t
    FROM unnest($3::text[], $4::text[], $5::text[], $6::jsonb[], $7::text[]) AS u(id, e, s, m, t)),
docs AS (
  INSERT INTO "VectorDocuments" AS d
         ("namespaceId", "indexName", "documentId", "embedding", "metadata", "text")
  SELECT $1::uuid, $2, u.id, u.e, u.m, u.t FROM u
  ON CONFLICT ("namespaceId", "indexName", "documentId") DO UPDATE SET
    "embedding" = EXCLUDED."embedding", "metadata" = EXCLUDED."metadata",
    "text" = EXCLUDED."text", "updatedAt" = now()
  RETURNING d."documentId")
INSERT INTO "VectorSignatures" AS s ("namespaceId", "indexName", "documentId", "signature")
SELECT $1::uuid, $2, u.id, u.s FROM u
ON CONFLICT ("namespaceId", "indexName", "documentId") DO UPDATE SET
  "signature" = EXCLUDED."signature"
RETURNING s."documentId")"};

constexpr statement search_exact_sql{"vectors.search_exact_sql", R"(
SELECT v."documentId", "vector_cosine"(v."embedding", $3::real[]) AS score, v."metadata",
       v."text", count(*) OVER () AS candidates
  FROM "VectorDocuments" v
 WHERE v."namespaceId" = $1::uuid AND v."indexName" = $2
 ORDER BY score DESC, v."documentId" LIMIT $4)"};

// The same ranking computed by the extension in C: <#> is the negative inner product, in
// single precision like the arrays. Prepared only on a database that has the extension.
constexpr statement search_exact_extension{"vectors.search_exact_extension", R"(
SELECT v."documentId", -(v."embedding"::vector <#> $3::real[]::vector) AS score, v."metadata",
       v."text", count(*) OVER () AS candidates
  FROM "VectorDocuments" v
 WHERE v."namespaceId" = $1::uuid AND v."indexName" = $2
 ORDER BY score DESC, v."documentId" LIMIT $4)"};

// The nearest `$6` signatures (one narrow, parallel scan), then the exact cosine of those
// candidates only, each document probed by its key (LATERAL, so the plan cannot pick a scan
// of the wide documents table). Fewer candidates than asked means every document was one:
// the ranking is then exact.
constexpr statement search_approximate{"vectors.search_approximate", R"(
WITH c AS MATERIALIZED (
  SELECT s."documentId" FROM "VectorSignatures" s
   WHERE s."namespaceId" = $1::uuid AND s."indexName" = $2
   ORDER BY bit_count(s."signature" # $5::varbit), s."documentId" LIMIT $6)
SELECT d."documentId", d.score, d."metadata", d."text", (SELECT count(*) FROM c) AS candidates
  FROM c CROSS JOIN LATERAL (
    SELECT v."documentId", "vector_cosine"(v."embedding", $3::real[]) AS score, v."metadata",
           v."text"
      FROM "VectorDocuments" v
     WHERE v."namespaceId" = $1::uuid AND v."indexName" = $2
       AND v."documentId" = c."documentId" OFFSET 0) d
 ORDER BY d.score DESC, d."documentId" LIMIT $4)"};

constexpr statement document_remove{"vectors.document_remove", R"(
DELETE FROM "VectorDocuments"
 WHERE "namespaceId" = $1::uuid AND "indexName" = $2 AND "documentId" = $3
RETURNING "documentId")"};

// The count reads the documents as they were before the cascade removes them.
constexpr statement index_remove{"vectors.index_remove", R"(
WITH gone AS (
  DELETE FROM "VectorIndexes" WHERE "namespaceId" = $1::uuid AND "name" = $2 RETURNING "name")
SELECT (SELECT count(*) FROM "VectorDocuments" v
         WHERE v."namespaceId" = $1::uuid AND v."indexName" = $2) AS documents
  FROM gone)"};

// The execution's month is its id's time (uuidv7): the plan sets up that partition only.
constexpr statement namespace_of{"vectors.workflow_namespace", R"(
SELECT w."namespaceId" FROM "WorkflowExecutions" w
 WHERE w."id" = $1::uuid AND w."startedAt" = uuid_extract_timestamp($1::uuid))"};

std::string array_text(const std::vector<float>& v) {
  std::string out;
  out.reserve(v.size() * 12 + 2);
  out += '{';
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0)
      out += ',';
    auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    out.append(buf, r.ptr);
  }
  out += '}';
  return out;
}

// The sign bit of every component, as varbit text.
std::string signature_text(const std::vector<float>& v) {
  std::string out(v.size(), '0');
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] > 0)
      out[i] = '1';
  return out;
}

caf::error wrong_dimension(const std::string& field, const std::string& index, int32_t want,
                           size_t got) {
  return make_error(errc::invalid, field + ": expected " + std::to_string(want)
                                     + " dimensions (index \"" + index + "\" holds "
                                     + std::to_string(want) + "), got " + std::to_string(got));
}

std::vector<vector_hit> hits_of(const result& r) {
  const int id = r.column_named("documentId"), score = r.column_named("score"),
            meta = r.column_named("metadata"), text = r.column_named("text");
  std::vector<vector_hit> out;
  for (int i = 0; i < r.rows(); ++i)
    out.push_back(vector_hit{r.str(i, id), r.f64(i, score), r.str(i, meta), r.opt_str(i, text)});
  return out;
}

} // namespace

bool valid_vector_index_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name[0] == '.' || name[0] == '-')
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

caf::expected<std::vector<float>> unit_vector(const std::vector<float>& embedding,
                                              const std::string& field) {
  if (embedding.empty())
    return make_error(errc::invalid, field + ": expected a non-empty array of numbers");
  if (embedding.size() > static_cast<size_t>(max_vector_dimensions))
    return make_error(errc::invalid, field + ": at most " + std::to_string(max_vector_dimensions)
                                       + " dimensions, got " + std::to_string(embedding.size()));
  double sum = 0;
  for (size_t i = 0; i < embedding.size(); ++i) {
    if (!std::isfinite(embedding[i]))
      return make_error(errc::invalid, field + "[" + std::to_string(i)
                                         + "]: expected a finite number (NaN and infinities "
                                           "have no direction)");
    sum += static_cast<double>(embedding[i]) * embedding[i];
  }
  if (sum == 0)
    return make_error(errc::invalid,
                      field + ": every component is zero (a zero vector has no direction)");
  const double norm = std::sqrt(sum);
  std::vector<float> out(embedding.size());
  for (size_t i = 0; i < embedding.size(); ++i)
    out[i] = static_cast<float>(embedding[i] / norm);
  return out;
}

caf::expected<bool> vector_extension_enabled(connection& conn) {
  auto r = conn.run1(extension_enabled);
  if (!r)
    return std::move(r.error());
  return r->str(0, r->column_named("extension")) == "t";
}

caf::expected<int32_t> put_vector_documents(connection& conn, const namespace_id& ns,
                                            const std::string& index,
                                            const std::vector<vector_document>& docs) {
  if (!valid_vector_index_name(index))
    return make_error(errc::invalid, "index: expected 1-128 of A-Z a-z 0-9 _ . - (not starting "
                                     "with . or -), got \"" + index.substr(0, 130) + "\"");
  if (docs.empty())
    return make_error(errc::invalid, "documents: expected at least one document");
  std::vector<std::string> ids, embeddings, signatures;
  std::vector<json_text> metadata;
  std::vector<std::optional<std::string>> texts;
  std::set<std::string> seen;
  for (size_t i = 0; i < docs.size(); ++i) {
    const auto& d = docs[i];
    const auto at = "documents[" + std::to_string(i) + "]";
    if (d.id.empty() || d.id.size() > 512)
      return make_error(errc::invalid, at + ".id: expected 1-512 characters");
    if (!seen.insert(d.id).second)
      return make_error(errc::invalid, at + ".id: \"" + d.id + "\" is given twice");
    auto unit = unit_vector(d.embedding, at + ".embedding");
    if (!unit)
      return std::move(unit.error());
    if (unit->size() != docs.front().embedding.size())
      return wrong_dimension(at + ".embedding", index,
                             static_cast<int32_t>(docs.front().embedding.size()), unit->size());
    auto meta = json_from_text(d.metadata_json.empty() ? "{}" : d.metadata_json,
                               at + ".metadata");
    if (!meta)
      return std::move(meta.error());
    ids.push_back(d.id);
    embeddings.push_back(array_text(*unit));
    signatures.push_back(signature_text(*unit));
    metadata.push_back(std::move(*meta));
    texts.push_back(d.text);
  }
  const auto dims = static_cast<int32_t>(docs.front().embedding.size());
  return perform(conn, [&](transaction& tx) -> caf::expected<int32_t> {
    auto& c = tx.conn();
    auto known = c.run01(index_locked, params::of(ns.str(), index));
    if (!known)
      return std::move(known.error());
    if (!*known) {
      if (auto made = c.run(index_create, params::of(ns.str(), index, dims)); !made)
        return std::move(made.error());
      known = c.run01(index_locked, params::of(ns.str(), index));
      if (!known)
        return std::move(known.error());
      if (!*known)
        return make_error(errc::conflict, "index \"" + index + "\" was removed meanwhile");
    }
    const auto have = (*known)->i32(0, (*known)->column_named("dimensions"));
    if (have != dims)
      return wrong_dimension("documents[0].embedding", index, have, docs.front().embedding.size());
    auto put = c.run(documents_put,
                     params::of(ns.str(), index, text_array(ids), text_array(embeddings),
                                text_array(signatures), json_array(metadata), text_array(texts)));
    if (!put)
      return std::move(put.error());
    return have;
  });
}

caf::expected<vector_search_result> search_vectors(connection& conn, const namespace_id& ns,
                                                   const std::string& index,
                                                   const vector_query& q) {
  if (q.limit < 1 || q.limit > 1000)
    return make_error(errc::invalid, "limit: expected 1-1000, got " + std::to_string(q.limit));
  auto unit = unit_vector(q.embedding, "embedding");
  if (!unit)
    return std::move(unit.error());
  auto info = conn.run01(index_read, params::of(ns.str(), index));
  if (!info)
    return std::move(info.error());
  if (!*info)
    return make_error(errc::not_found, "vector index \"" + index + "\"");
  const auto& row = **info;
  const auto dims = row.i32(0, row.column_named("dimensions"));
  if (static_cast<size_t>(dims) != unit->size())
    return wrong_dimension("embedding", index, dims, unit->size());
  const bool have_extension = row.str(0, row.column_named("extension")) == "t";
  if (q.backend == vector_backend::extension && !have_extension)
    return make_error(errc::unsupported, "the vector extension is not enabled in this database");
  const bool use_extension = q.backend == vector_backend::extension
                             || (q.backend == vector_backend::automatic && have_extension);
  vector_search_result out;
  out.extension = use_extension;
  const auto limit = static_cast<int32_t>(q.limit);
  const auto candidates = static_cast<int32_t>(std::max(q.candidates, q.limit));
  // With the extension every cosine is computed in C: exact at any size.
  const bool scan_all = use_extension || q.exact;
  auto r = scan_all ? conn.run(use_extension ? search_exact_extension : search_exact_sql,
                               params::of(ns.str(), index, array_text(*unit), limit))
                    : conn.run(search_approximate,
                               params::of(ns.str(), index, array_text(*unit), limit,
                                          signature_text(*unit), candidates));
  if (r && !scan_all && r->rows() > 0)
    out.exact = r->i64(0, r->column_named("candidates")) < candidates;
  if (!r)
    return std::move(r.error());
  if (r->rows() > 0)
    out.candidates = r->i64(0, r->column_named("candidates"));
  out.hits = hits_of(*r);
  return out;
}

caf::expected<bool> remove_vector_document(connection& conn, const namespace_id& ns,
                                           const std::string& index, const std::string& id) {
  auto r = conn.run(document_remove, params::of(ns.str(), index, id));
  if (!r)
    return std::move(r.error());
  return r->rows() > 0;
}

caf::expected<std::optional<int64_t>> remove_vector_index(connection& conn,
                                                          const namespace_id& ns,
                                                          const std::string& index) {
  auto r = conn.run01(index_remove, params::of(ns.str(), index));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return std::optional<int64_t>{};
  return std::optional<int64_t>{(*r)->i64(0, (*r)->column_named("documents"))};
}

caf::expected<namespace_id> workflow_namespace(connection& conn, const std::string& wf) {
  auto r = conn.run01(namespace_of, params::of(wf));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "workflow " + wf);
  return namespace_id{(*r)->str(0, (*r)->column_named("namespaceId"))};
}

} // namespace nf::store
