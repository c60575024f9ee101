#!/usr/bin/env bash
# store/ reads a result's columns by name, never by position: a decoder finds each column once
# per result (`result::column_named`, store/pg/result.hpp) and reads every row by that index,
# so a column added to or moved within a SELECT cannot shift what a decoder reads. This
# flags a typed getter whose column argument is a number (`r.str(i, 7)`, `rows->i64(0, 0)`)
# or a `text_array` of a result's column by number, anywhere in store/ but the libpq wrapper
# that defines them.
set -u
root=${1:?usage: row_reads.sh REPO_ROOT}
cd "$root" || exit 2

getters='str|opt_str|text|i64|i32|f64|opt_i64|boolean|is_null'
found=$(grep -rnE "(\.|->)($getters)\([^,()]*, *[0-9]+\)|text_array\(\*?[A-Za-z_]+, *[0-9]+\)" \
          --include='*.cpp' --include='*.hpp' store | grep -v '^store/pg/')
if [ -n "$found" ]; then
  echo "$found"
  echo "row_reads: read these columns by name (result::column_named), once per result" >&2
  exit 1
fi
