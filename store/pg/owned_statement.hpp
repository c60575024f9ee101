#pragma once

#include <functional>
#include <string>
#include <utility>

#include "store/sql_check.hpp"

namespace nf::store {

/// A statement made at run time (a variant of a declared one): it owns the name and the
/// text its `st` points into, so it stays where it was made (held by a unique_ptr).
struct owned_statement {
  owned_statement(std::string name_, std::string sql_)
    : name(std::move(name_)), sql(std::move(sql_)), st{name.c_str(), sql.c_str()} {}
  owned_statement(const owned_statement&) = delete;
  owned_statement& operator=(const owned_statement&) = delete;

  const std::string name;
  const std::string sql;
  const statement st;
};

/// The statement named `name`: made with `make_sql()` the first time it is asked for, then
/// kept for the life of the process. A name stands for one text. Thread-safe.
const statement& statement_variant(const std::string& name,
                                   const std::function<std::string()>& make_sql);

} // namespace nf::store
