#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct pg_result;

namespace nf::store {

/// An owned PGresult in text format, with typed access by row and column.
/// Access past the end, or a NULL read with a non-optional getter, is a
/// programmer error (assertion), not an error value.
class result {
public:
  result() = default;
  explicit result(pg_result* res);

  int rows() const;
  int columns() const;
  bool empty() const { return rows() == 0; }
  /// Rows changed by an INSERT/UPDATE/DELETE (PQcmdTuples).
  int64_t affected() const;

  bool is_null(int row, int col) const;
  std::string_view text(int row, int col) const;
  /// The index of the first column at or after `from` whose name is exactly `name`: a column
  /// or a quoted alias as the statement spells it without its quotes ("workflowId"), an
  /// unquoted alias in lower case; aborts when there is none, in release builds too. A
  /// decoder looks its columns up once per result, then reads every row by them
  /// (store/execution_columns.hpp).
  int column_named(std::string_view name, int from = 0) const;

  std::string str(int row, int col) const { return std::string{text(row, col)}; }
  int64_t i64(int row, int col) const;
  int32_t i32(int row, int col) const { return static_cast<int32_t>(i64(row, col)); }
  double f64(int row, int col) const;
  bool boolean(int row, int col) const;

  std::optional<std::string> opt_str(int row, int col) const;
  std::optional<int64_t> opt_i64(int row, int col) const;

  pg_result* native() const { return res_.get(); }

private:
  struct deleter {
    void operator()(pg_result* r) const;
  };
  std::shared_ptr<pg_result> res_;
};

} // namespace nf::store
