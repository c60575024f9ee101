#pragma once

// "VectorIndexes", "VectorDocuments" and "VectorSignatures" (migration 0032): embeddings a
// namespace stores in named indexes and searches by cosine similarity. An embedding is kept
// at unit length, so the cosine is a dot product; an index's dimension is fixed by its first
// document. Search is exact (every document's cosine) or, on a large index without the
// `vector` extension, approximate: the `candidates` documents whose sign-bit signatures are
// nearest by Hamming distance, ranked by their exact cosine. Ties rank by document id.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// The most dimensions an index may have (the migration's CHECK).
inline constexpr int max_vector_dimensions = 4096;

/// How many signature candidates an approximate search ranks exactly by default.
inline constexpr int default_vector_candidates = 200;

struct vector_document {
  std::string id;
  std::vector<float> embedding; ///< any length > 0; stored normalised
  std::string metadata_json = "{}";
  std::optional<std::string> text;
};

/// Where a search computes its cosines: `automatic` takes the extension when this database
/// has it; `sql` and `extension` force one (the ranking test runs both).
enum class vector_backend { automatic, sql, extension };

struct vector_query {
  std::vector<float> embedding;
  int limit = 10;
  bool exact = false;  ///< rank every document, whatever the index's size
  int candidates = default_vector_candidates;
  vector_backend backend = vector_backend::automatic;
};

struct vector_hit {
  std::string id;
  double score = 0; ///< cosine similarity, -1 … 1
  std::string metadata_json;
  std::optional<std::string> text;
};

struct vector_search_result {
  std::vector<vector_hit> hits;
  bool exact = true;       ///< false: ranked among the signature candidates only
  bool extension = false;  ///< the cosines were computed by the `vector` extension
  int64_t candidates = 0;  ///< how many documents were ranked exactly
};

/// Whether `name` may name an index: 1–128 of A-Z a-z 0-9 _ . -, not starting with . or -.
bool valid_vector_index_name(const std::string& name);

/// `embedding` at unit length, or an `invalid` error naming `field` when it is empty, longer
/// than max_vector_dimensions, holds a NaN or an infinity, or is all zeros.
caf::expected<std::vector<float>> unit_vector(const std::vector<float>& embedding,
                                              const std::string& field);

/// Whether this database has the `vector` extension enabled.
caf::expected<bool> vector_extension_enabled(connection& conn);

/// Stores (or replaces, by id) documents in index `index`, creating the index with the first
/// document's dimension. `invalid` naming `documents[i].embedding` when one's dimension is not
/// the index's, and `documents[i].id` for an id given twice. One transaction. Returns the
/// index's dimension.
caf::expected<int32_t> put_vector_documents(connection& conn, const namespace_id& ns,
                                            const std::string& index,
                                            const std::vector<vector_document>& docs);

/// The `limit` documents nearest to the query, most similar first. `not_found` when the
/// namespace has no such index; `invalid` naming `embedding` for a dimension not the index's.
caf::expected<vector_search_result> search_vectors(connection& conn, const namespace_id& ns,
                                                   const std::string& index,
                                                   const vector_query& q);

/// Whether the document was there (and is removed).
caf::expected<bool> remove_vector_document(connection& conn, const namespace_id& ns,
                                           const std::string& index, const std::string& id);

/// Removes an index with its documents; how many documents it had, nullopt when there was no
/// such index.
caf::expected<std::optional<int64_t>> remove_vector_index(connection& conn,
                                                          const namespace_id& ns,
                                                          const std::string& index);

/// The namespace of workflow `wf` (a system task's documents go there); `not_found` when
/// there is no such workflow.
caf::expected<namespace_id> workflow_namespace(connection& conn, const std::string& wf);

} // namespace nf::store
