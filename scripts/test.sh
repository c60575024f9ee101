#!/usr/bin/env bash
# Runs every nodeflow test on this machine: installs what is missing (Debian
# packages, Postgres 18), builds, and runs ctest, whose `pg` fixture starts the
# suite's own Postgres 18 on a free port and stops it afterwards.
#   NF_BUILD_DIR   build directory (default: build/ in the repository)
#   NF_TEST_DSN    use this Postgres 18 instead of starting one
#   NF_FUZZ_SECONDS  seconds for the flow fuzzer (default 60; 0 skips it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/deps.sh" --tests
[ -n "${NF_TEST_DSN:-}" ] || "$root/scripts/pg18.sh" install >/dev/null

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs"

fuzz_seconds=${NF_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" != 0 ] && [ -x "$root/scripts/fuzz-flow.sh" ]; then
  "$root/scripts/fuzz-flow.sh" "$fuzz_seconds"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
(cd "$build" && ctest -j "$jobs" --output-on-failure --timeout 900) 2>&1 | tee "$log" || status=$?
if [ $status -ne 0 ]; then
  # CAF's default verbosity names a failed test but not its check: rerun the
  # failed suites verbosely and show only the failing checks.
  echo
  echo "failing checks:"
  # The same directory the tests' `pg` fixture uses (tests/CMakeLists.txt).
  pgdir=/tmp/nodeflow-test-$(printf '%s' "$(cd "$build" && pwd)" | md5sum | cut -c1-10)
  "$root/scripts/test-pg.sh" start "$pgdir" >/dev/null 2>&1 || true
  grep -oE '[0-9]+ - [A-Za-z0-9_]+\.[^ ]+' "$log" | sed 's/^[0-9]* - //' | sort -u | while read -r t; do
    bin=${t%%.*}; suite=${t#*.}
    exe=$(find "$build" -type f -name "$bin" -perm -u+x | head -1)
    [ -n "$exe" ] || continue
    "$exe" -n -v 4 -s "^${suite}\$" 2>&1 | grep -E '^!!' | head -20 || true
  done
  "$root/scripts/test-pg.sh" stop "$pgdir" || true
  echo
  tail -n 12 "$log" | grep -E 'tests passed|tests failed|Total Test time' || true
fi
exit $status
