#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "flow/uuid.hpp"

namespace nf {

/// A value with a name of its own, so a workflow id cannot be passed where a
/// task id or a lease token is expected (Redpanda's named_type).
template <class T, class Tag>
class named_type {
public:
  using value_type = T;
  named_type() = default;
  explicit named_type(T v) : value_(std::move(v)) {}
  const T& value() const { return value_; }
  bool operator==(const named_type& o) const { return value_ == o.value_; }
  bool operator!=(const named_type& o) const { return value_ != o.value_; }
  bool operator<(const named_type& o) const { return value_ < o.value_; }

private:
  T value_{};
};

/// UUIDs travel as their canonical text form; `str()` lets store params bind them.
template <class Tag>
class uuid_type : public named_type<std::string, Tag> {
public:
  using named_type<std::string, Tag>::named_type;
  const std::string& str() const { return this->value(); }
  bool empty() const { return this->value().empty(); }
};

using workflow_id = uuid_type<struct workflow_id_tag>;
using task_id = uuid_type<struct task_id_tag>;
using lease_token = uuid_type<struct lease_token_tag>;
using namespace_id = uuid_type<struct namespace_id_tag>;
using node_id = uuid_type<struct node_id_tag>;
using event_id = uuid_type<struct event_id_tag>;

using epoch = named_type<int64_t, struct epoch_tag>;
/// A logical partition (the `"shard"` column): 0 <= shard < partitionCount.
using shard_id = named_type<int16_t, struct shard_id_tag>;

/// A fresh uuidv7 in canonical text form, made in C++ (store/uuid.cpp) so a
/// caller knows a new workflow's partition (`shard_of`) before any SQL runs:
/// 48 bits of Unix milliseconds, then random bits (the last 16 pick the shard).
std::string new_uuidv7();

/// True for the canonical text of a version-7 UUID, the only ids whose leading 48 bits are
/// their Unix milliseconds: `"startedAt"` is `uuid_extract_timestamp(id)`, NULL for a v4.
inline bool is_uuidv7_text(std::string_view s) {
  return flow::is_uuid(s) && s[14] == '7';
}

/// The namespace every install has (migration 0001), looked up by id, never by name.
inline const namespace_id default_namespace{"00000000-0000-0000-0000-000000000001"};

} // namespace nf
