#pragma once

// What an EXPLAIN (ANALYZE, FORMAT JSON) plan read, for the suites that check a
// statement's plan reads only the rows it uses.

#include <string>

#include <boost/json.hpp>

#include "caf/test/unit_test.hpp"

namespace nf::test {

/// Calls `f(node, relation)` for every scan node of a relation. An UPDATE of one partition
/// names it as its target: that node reads nothing, its scan below does.
template <class F>
void for_each_scan(const boost::json::object& node, F f) {
  if (auto* rel = node.if_contains("Relation Name"); rel && node.at("Node Type") != "ModifyTable")
    f(node, std::string{rel->as_string()});
  if (auto* plans = node.if_contains("Plans"))
    for (const auto& child : plans->as_array())
      for_each_scan(child.as_object(), f);
}

/// The rows a plan read from `table` or its partitions (returned or dropped by a filter);
/// `each(node, relation, rows)` is called for every scan that read some.
template <class F>
double rows_read(const boost::json::object& plan, const std::string& table, F each) {
  double read = 0;
  for_each_scan(plan, [&](const boost::json::object& node, const std::string& rel) {
    if (rel != table && rel.rfind(table + "_", 0) != 0)
      return;
    auto loops = node.at("Actual Loops").to_number<double>();
    double n = node.at("Actual Rows").to_number<double>() * loops;
    if (auto* f = node.if_contains("Rows Removed by Filter"))
      n += f->to_number<double>() * loops;
    if (n == 0)
      return;
    auto* index = node.if_contains("Index Name");
    CAF_MESSAGE(rel << ": " << n << " rows read by a " << node.at("Node Type").as_string()
                    << " through " << (index ? std::string{index->as_string()} : "no index"));
    each(node, rel, n);
    read += n;
  });
  return read;
}

/// The rows a plan read from `table` or its partitions.
inline double rows_read(const boost::json::object& plan, const std::string& table) {
  return rows_read(plan, table, [](auto&&...) {});
}

} // namespace nf::test
