#!/usr/bin/env bash
# Every SQL statement in store/ is declared constexpr, so that store/sql_check.hpp checks its
# identifiers against the schema catalog at compile time: a statement object (declared, or a
# temporary) whose name is a string literal must be constexpr. Statements made at run time
# (store/pg/owned_statement.*: a variant's name and text are strings built then) take no
# literal, and a `const statement&` or `*` names a statement declared elsewhere.
#
# And the two writes that carry an invariant are spelt once, for every statement that makes
# them: the decider's wake, the "DecideQueues" upsert (I2, store/decide_queues.hpp), and the
# allocation of event seqs from "lastSeq" (I8, store/event_seq.hpp).
set -u
root=${1:?usage: statements.sh REPO_ROOT}
cd "$root" || exit 2
status=0

mapfile -t files < <(find store -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) | sort)

# A declaration (`[static] [const] [nf::][store::]statement x{…}`, `… x = {…}`,
# `… x = statement{…}`, `… x(…)`) or a temporary (`statement{…}`), its parts possibly on the
# following lines, whose first argument is a string literal, without `constexpr` before it
# on its line or ending the line above.
awk '
  function ltrim(s) { sub(/^[ \t]+/, "", s); return s }
  # The text from line j on, joined with the next nonblank line while it is blank.
  function from_line(j,   t) {
    t = ""
    while (j <= nlines) { t = ltrim(lines[j]); if (t != "") return t; j++ }
    return ""
  }
  function check(file,   i, line, rest, before, after, s, t, j, prev) {
    for (i = 1; i <= nlines; i++) {
      line = lines[i]
      if (line ~ /^[ \t]*(\/\/|\/\*|\*)/) continue
      rest = line; before = ""
      while (match(rest, /(^|[^A-Za-z0-9_])statement([^A-Za-z0-9_]|$)/)) {
        s = RSTART
        if (substr(rest, s, 9) != "statement") s++
        before = before substr(rest, 1, s - 1)
        after = substr(rest, s + 9)
        rest = after
        before = before "statement"
        j = i
        t = ltrim(after)
        if (t == "") { j++; t = from_line(j) }
        if (match(t, /^[A-Za-z_][A-Za-z0-9_]*/)) {
          t = ltrim(substr(t, RLENGTH + 1))
          if (t == "") { j++; t = from_line(j) }
        }
        if (t ~ /^=/) {
          t = ltrim(substr(t, 2))
          sub(/^((nf::)?store::)?statement[ \t]*/, "", t)
        }
        if (t !~ /^[{(]/) continue
        t = ltrim(substr(t, 2))
        if (t == "") t = from_line(j + 1)
        if (t !~ /^(u8|u|U|L)?R?"/) continue
        if (before ~ /(^|[^A-Za-z0-9_])constexpr([^A-Za-z0-9_]|$)/) continue
        prev = i - 1
        while (prev >= 1 && lines[prev] ~ /^[ \t]*$/) prev--
        if (prev >= 1 && lines[prev] ~ /(^|[^A-Za-z0-9_])constexpr[ \t]*$/) continue
        printf "%s:%d: a statement with a SQL literal, not constexpr (store/sql_check.hpp does not check it): %s\n", file, i, ltrim(line)
        bad = 1
      }
    }
  }
  FNR == 1 && NR != 1 { check(name); nlines = 0 }
  { lines[FNR] = $0; nlines = FNR; name = FILENAME }
  END { if (NR > 0) check(name); exit bad }
' "${files[@]}" || status=1

# The code lines of store/ as `file:line:text`: comment lines (`//…`, `/* …`, ` * …`, SQL
# `-- …`) dropped, and a trailing `// …` cut off.
code=$(awk '
  /^[ \t]*(\/\/|\/\*|\*|--)/ { next }
  { line = $0; sub(/[ \t]+\/\/.*$/, "", line); print FILENAME ":" FNR ":" line }
' "${files[@]}")

# There must be exactly one code line matching the extended regular expression $2.
exactly_once() {
  local what=$1 pattern=$2 hits n
  hits=$(printf '%s\n' "$code" | grep -Ei -- "$pattern")
  n=$(printf '%s' "$hits" | grep -c '^')
  if [ "$n" -ne 1 ]; then
    echo "$what is written $n times in store/, not once:"
    printf '%s\n' "$hits" | sed 's/^/  /'
    status=1
  fi
}

exactly_once 'the "DecideQueues" upsert (I2, store/decide_queues.hpp)' \
  'INTO[[:space:]]+\\?"DecideQueues\\?"'
exactly_once 'the seq allocation from "lastSeq" (I8, store/event_seq.hpp)' \
  '\\?"lastSeq\\?"[[:space:]]*=([^=]|$)'

exit $status
