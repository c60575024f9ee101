#include "flow/json_read.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace nf::flow {

std::string describe(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::object: return "an object";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::string: return quoted(v.get_string());
    case boost::json::kind::double_: {
      // As written by people ("1.5", "1e+12"), not Boost's canonical "1.5E0".
      std::ostringstream out;
      out << std::setprecision(17) << v.get_double();
      return out.str();
    }
    default: return boost::json::serialize(v);
  }
}

bool read_count(const boost::json::value& v, const std::string& path, std::int64_t& out,
                problems& errs) {
  auto bad = [&] {
    errs.push_back({path, "expected a non-negative integer no larger than "
                            + std::to_string(max_count) + ", got " + describe(v)});
    return false;
  };
  if (v.is_int64()) {
    if (v.get_int64() < 0 || v.get_int64() > max_count)
      return bad();
    out = v.get_int64();
    return true;
  }
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<std::uint64_t>(max_count))
      return bad();
    out = static_cast<std::int64_t>(v.get_uint64());
    return true;
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (!(d >= 0) || d > static_cast<double>(max_count) || std::floor(d) != d)
      return bad();
    out = static_cast<std::int64_t>(d);
    return true;
  }
  return bad();
}

object_reader::object_reader(const boost::json::object& obj, const std::string& path,
                             problems& errs)
  : obj_(obj), path_(path), errs_(errs) {
  for (const auto& kv : obj_)
    key_lengths_ |= std::uint64_t{1} << std::min<std::size_t>(kv.key().size(), 63);
  if (obj_.size() > 64)
    found_beyond_64_.resize(obj_.size() - 64);
}

std::string object_reader::field_path(std::string_view key) const {
  return path_key(path_, key);
}

const boost::json::value* object_reader::get(std::string_view key) {
  // A reader asks for every field it knows, most of them absent.
  if ((key_lengths_ >> std::min<std::size_t>(key.size(), 63) & 1) == 0)
    return nullptr;
  return find(key);
}

const boost::json::value* object_reader::peek(std::string_view key) const {
  return obj_.if_contains(key);
}

const boost::json::value* object_reader::find(std::string_view key) {
  // On the small objects of definitions a plain scan beats the library's lookup.
  auto it = obj_.end();
  if (obj_.size() <= 16)
    it = std::find_if(obj_.begin(), obj_.end(), [&](const boost::json::key_value_pair& kv) {
      return std::string_view(kv.key()) == key;
    });
  else
    it = obj_.find(key);
  if (it == obj_.end())
    return nullptr;
  auto i = static_cast<std::size_t>(it - obj_.begin());
  if (i < 64)
    found_ |= std::uint64_t{1} << i;
  else
    found_beyond_64_[i - 64] = true;
  const auto* v = &it->value();
  return v->is_null() ? nullptr : v;
}

void object_reader::missing(std::string_view key, std::string_view expected) {
  errs_.push_back({field_path(key), "missing required field (expected " + std::string(expected)
                                      + ")"});
}

void object_reader::text(std::string_view key, std::string& out, bool required) {
  const auto* v = get(key);
  if (v == nullptr) {
    if (required)
      missing(key, "a non-empty string");
    return;
  }
  if (!v->is_string()) {
    errs_.push_back({field_path(key), "expected a string, got " + describe(*v)});
    return;
  }
  out.assign(v->get_string().data(), v->get_string().size());
  if (required && out.empty())
    errs_.push_back({field_path(key), "expected a non-empty string"});
}

void object_reader::count(std::string_view key, std::int64_t& out, bool required) {
  const auto* v = get(key);
  if (v == nullptr) {
    if (required)
      missing(key, "a non-negative integer");
    return;
  }
  read_count(*v, field_path(key), out, errs_);
}

void object_reader::flag(std::string_view key, bool& out) {
  const auto* v = get(key);
  if (v == nullptr)
    return;
  if (!v->is_bool()) {
    errs_.push_back({field_path(key), "expected true or false, got " + describe(*v)});
    return;
  }
  out = v->get_bool();
}

void object_reader::object(std::string_view key, boost::json::object& out) {
  const auto* v = get(key);
  if (v == nullptr)
    return;
  if (!v->is_object()) {
    errs_.push_back({field_path(key), "expected an object, got " + describe(*v)});
    return;
  }
  out = v->get_object();
}

void object_reader::string_list(std::string_view key, std::vector<std::string>& out) {
  const auto* v = get(key);
  if (v == nullptr)
    return;
  if (!v->is_array()) {
    errs_.push_back({field_path(key), "expected an array of strings, got " + describe(*v)});
    return;
  }
  const auto& arr = v->get_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) {
      errs_.push_back({path_index(field_path(key), i),
                       "expected a string, got " + describe(arr[i])});
      continue;
    }
    out.emplace_back(arr[i].get_string());
  }
}

int object_reader::choice(std::string_view key, std::initializer_list<std::string_view> labels) {
  const auto* v = get(key);
  if (v == nullptr)
    return -1;
  if (v->is_string()) {
    int i = 0;
    for (auto label : labels) {
      if (v->get_string() == label)
        return i;
      ++i;
    }
  }
  std::string expected;
  for (auto label : labels) {
    if (!expected.empty())
      expected += ", ";
    expected += label;
  }
  errs_.push_back({field_path(key), "expected one of " + expected + ", got " + describe(*v)});
  return -1;
}

void object_reader::finish(std::string_view what) {
  for (std::size_t i = 0; i < obj_.size(); ++i) {
    bool found = i < 64 ? (found_ >> i & 1) != 0 : found_beyond_64_[i - 64];
    if (!found) {
      auto key = (obj_.begin() + i)->key();
      errs_.push_back({field_path(key), "unknown field (not part of " + std::string(what) + ")"});
    }
  }
}

} // namespace nf::flow
