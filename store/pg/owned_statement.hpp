#pragma once

#include <functional>
#include <string>
#include <utility>

#include "store/schema/sql_check.hpp"

namespace nf::store {

/// A statement made at run time (a variant of a declared one): it owns the name and the
/// text its `st` points into, so it stays where it was made (held by a unique_ptr). With
/// `base`, its parameters are typed as `base` declares them (statement::typed_as).
struct owned_statement {
  owned_statement(std::string name_, std::string sql_, const statement* base = nullptr)
    : name(std::move(name_)), sql(std::move(sql_)), st{name.c_str(), sql.c_str(), 0, 0, base} {}
  owned_statement(const owned_statement&) = delete;
  owned_statement& operator=(const owned_statement&) = delete;

  const std::string name;
  const std::string sql;
  const statement st;
};

/// The variant of `base` named `name`: made with `make_sql()` the first time it is asked
/// for, then kept for the life of the process; its parameters are typed as `base`
/// declares them. A name stands for one text. Thread-safe.
const statement& statement_variant(const statement& base, const std::string& name,
                                   const std::function<std::string()>& make_sql);

} // namespace nf::store
