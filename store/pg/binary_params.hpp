#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/pg/params.hpp"
#include "store/schema/sql_check.hpp"

namespace nf::store {

/// The array parameters a statement's text declares, `$N::uuid[]` and the like: the
/// array type's oid at N-1, 0 where the text declares none (or two different ones). A
/// variant's are those its base's text declares (statement::typed_as).
/// Only the element types the binary encoder knows are declared (uuid, text, smallint,
/// integer, bigint, boolean, jsonb). Made once per statement text and thread; a
/// statement's text lives as long as the process.
const std::vector<uint32_t>& declared_array_types(const statement& st);

/// The parameter types `st` is prepared with (PQprepare's nParams and paramTypes; 0 lets
/// the server infer one from the text): none for a declared statement, whose text names
/// every parameter; for a variant, the array types its base declares, since its own text
/// may no longer name one of them.
struct prepared_types {
  explicit prepared_types(const statement& st);
  int count = 0;
  const uint32_t* types = nullptr;
};

/// A Postgres array literal as `params` carries it (`{"a","b",NULL}`, one dimension)
/// in the binary array format of `array_oid`, or nothing when the literal or one of its
/// elements is not one this encoder reads exactly as Postgres would: the parameter then
/// goes as text and the server parses it (and names what is wrong with it).
///
/// Why: the server parses a text array character by character and calls the element
/// type's input function per element, and the batches' arrays hold hundreds of uuids, texts
/// and numbers per statement.
std::optional<std::string> binary_array(uint32_t array_oid, std::string_view literal);

/// What libpq's PQsendQueryPrepared / PQexecPrepared take for `p` run as `st`: each value,
/// its length and its format (1 = binary). Arrays `st` declares go binary when they can.
class wire_params {
public:
  wire_params(const statement& st, const params& p);

  int count() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

private:
  std::vector<std::string> binary_;
  std::vector<const char*> values_;
  std::vector<int> lengths_, formats_;
};

} // namespace nf::store
