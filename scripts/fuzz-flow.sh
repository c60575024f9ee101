#!/usr/bin/env bash
# Builds flow/'s libFuzzer target with clang (ASan + UBSan) in its own build
# directory and fuzzes definition parsing, validation, round trips and
# decide() steps for N seconds (default 60), and beside it the script sandbox (frames,
# jq's module scan, INLINE/jq programs run under the sandbox limits) for as long.
# Exits non-zero on any finding; the crashing input is left in the build
# directory (crash-*, leak-*, …).
#   usage: scripts/fuzz-flow.sh [SECONDS]     env: NF_FUZZ_BUILD_DIR
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_FUZZ_BUILD_DIR:-$root/build-fuzz}

# clang and its libFuzzer/sanitizer runtimes: Debian 12's clang 14.
if ! command -v clang++ >/dev/null \
   || ! compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz-flow: installing clang libclang-rt-14-dev" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    clang libclang-rt-14-dev >/dev/null
fi

cmake -S "$root" -B "$build" -G Ninja -DNF_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j2 flow_fuzz script_fuzz

# New inputs go to scratch corpora; the checked-in seeds stay read-only.
corpus=$(mktemp -d)
script_corpus=$(mktemp -d)
trap 'rm -rf "$corpus" "$script_corpus"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# The two targets fuzz side by side, one core each: each still gets its full time.
echo "fuzz-flow: fuzzing definitions and the script sandbox for ${seconds}s" >&2
"$build/tests/flow/fuzz/flow_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=16384 -print_final_stats=1 -artifact_prefix="$build/" \
  "$corpus" "$root/tests/flow/fuzz/corpus" "$root/tests/flow/valid" "$root/tests/flow/invalid" \
  > "$build/flow_fuzz.log" 2>&1 &
flow_pid=$!
# The script target starts sandbox processes of itself; -timeout covers one run
# (a program stopped at its 300 ms limit) with room to spare.
"$build/tests/engine/fuzz/script_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$build/script-" \
  "$script_corpus" "$root/tests/engine/fuzz/corpus" > "$build/script_fuzz.log" 2>&1 &
script_pid=$!

status=0
for target in flow script; do
  pid_var=${target}_pid
  if wait "${!pid_var}"; then
    tail -n 12 "$build/${target}_fuzz.log" | grep -E '^(stat::|Done)' >&2 || true
    echo "fuzz-flow: ${target}_fuzz clean after ${seconds}s" >&2
  else
    status=1
    echo "fuzz-flow: ${target}_fuzz found a problem (its log follows; the input is in $build)" >&2
    tail -n 80 "$build/${target}_fuzz.log" >&2
  fi
done
exit $status
