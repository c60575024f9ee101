#pragma once

// Vector documents as the client protocol and the LLM_* embedding tasks see them: JSON in,
// JSON out, over store/vectors.hpp. The HTTP door, a CAF client and a workflow's task share
// these functions, so a field is read and refused in one place.

#include <string>
#include <vector>

#include <boost/json/value.hpp>
#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"
#include "store/vectors.hpp"

namespace nf::engine {

/// An array of numbers as an embedding; `invalid` naming `field` (and the element) otherwise.
caf::expected<std::vector<float>> read_embedding(const boost::json::value& v,
                                                 const std::string& field);

/// `{"index","mode":"exact"|"approximate","distance":"sql"|"vector","candidates",
/// "results":[{"id","score","metadata","text"}]}`.
boost::json::object search_answer(const std::string& index, const store::vector_search_result& r);

/// A search whose body is {"embedding","limit"?,"exact"?}.
caf::expected<store::vector_search_result> search_documents(store::connection& conn,
                                                            const namespace_id& ns,
                                                            const std::string& index,
                                                            const boost::json::object& body);

/// msg::vector_request (namespace_id holds the namespace's id, as the api resolved it).
/// A delete and a drop are audited (`vectors.delete`, `vectors.drop`) in their transaction.
caf::expected<std::string> vectors(store::connection& conn, const msg::vector_request& r);

} // namespace nf::engine
