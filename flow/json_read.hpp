#pragma once

// Typed, path-aware field reading for definitions from untrusted JSON. Each
// getter records what it could not accept as a problem and leaves the default.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "flow/problem.hpp"

namespace nf::flow {

/// The largest count or duration accepted anywhere (seconds, ms or a count):
/// keeps every later multiplication by 1000 far from overflow.
constexpr std::int64_t max_count = 2147483647;

/// "a string", "1.5", "-3", "null", …: how a value is named in messages.
std::string describe(const boost::json::value& v);

/// Reads a non-negative integer: integral doubles (3.0) are accepted,
/// 1.5 and -3 are problems. Returns false (and reports) if not acceptable.
bool read_count(const boost::json::value& v, const std::string& path, std::int64_t& out,
                problems& errs);

/// Reads the fields of one JSON object. Every field a getter asks for is
/// "known"; finish() reports each remaining field as unknown, so no field is
/// ever silently dropped (DESIGN §7).
class object_reader {
 public:
  /// `path` must outlive the reader (it is not copied: readers are many).
  object_reader(const boost::json::object& obj, const std::string& path, problems& errs);

  const std::string& path() const { return path_; }
  std::string field_path(std::string_view key) const;

  /// The raw value, or nullptr when absent or JSON null.
  const boost::json::value* get(std::string_view key);
  /// The raw value (JSON null included), or nullptr when absent, without making
  /// the field known: another reader may still claim it, or finish() report it.
  const boost::json::value* peek(std::string_view key) const;
  void text(std::string_view key, std::string& out, bool required = false);
  void count(std::string_view key, std::int64_t& out, bool required = false);
  void flag(std::string_view key, bool& out);
  void object(std::string_view key, boost::json::object& out);
  void string_list(std::string_view key, std::vector<std::string>& out);
  /// One of `labels`; returns the index, or -1 when absent or invalid.
  int choice(std::string_view key, std::initializer_list<std::string_view> labels);
  void missing(std::string_view key, std::string_view expected);
  void finish(std::string_view what);

 private:
  const boost::json::value* find(std::string_view key);

  const boost::json::object& obj_;
  const std::string& path_;
  problems& errs_;
  // Bit n is set when a key of length n is present (63: 63 or longer), so
  // most absent fields are known absent without comparing a key.
  std::uint64_t key_lengths_ = 0;
  // Which entries of obj_ a getter found, by position: the first 64 in a word
  // (definitions' objects are small), the rest only for objects that need it.
  std::uint64_t found_ = 0;
  std::vector<bool> found_beyond_64_;
};

} // namespace nf::flow
