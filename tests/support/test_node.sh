# Sourced by the scripts that drive a node from outside (tests/sdk/run.sh, tests/ui/run.sh,
# bench/idle/run, bench/ui/run): a scratch folder, a Postgres 18 of its own (or NF_TEST_DSN's), one
# `nodeflow serve`, and a cleanup on exit that stops what was started.
#
#   source tests/support/test_node.sh
#   nf_test_begin                 # sets work; stops everything on exit
#   nf_test_postgres              # sets dsn
#   nf_test_serve BIN ARGS...     # sets http, client and node_pid once the node listens;
#                                 # log: $work/node.log
#   nf_test_spawned PID           # another process to stop on exit

nf_test_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
nf_test_pids=()

nf_test_cleanup() {
  local p
  for p in "${nf_test_pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  if [ -z "${NF_TEST_DSN:-}" ]; then "$nf_test_root/scripts/pg18.sh" stop "$work/pg" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}

nf_test_begin() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/nf-test.XXXXXX")
  chmod 755 "$work"
  trap nf_test_cleanup EXIT
}

nf_test_postgres() {
  if [ -n "${NF_TEST_DSN:-}" ]; then
    dsn=$NF_TEST_DSN
  else
    dsn=$("$nf_test_root/scripts/pg18.sh" start "$work/pg" | tail -1)
  fi
}

nf_test_spawned() {
  nf_test_pids+=("$1")
}

nf_test_serve() {
  local bin=$1
  shift
  # Created before the node starts: the loop below may read it before the child opens it.
  : >"$work/node.log"
  "$bin" serve --dsn "$dsn" --migrate --port 0 --http-port -1 "$@" >"$work/node.log" 2>&1 &
  local pid=$!
  node_pid=$pid
  nf_test_spawned "$pid"
  http="" client=""
  for _ in $(seq 1 300); do
    http=$(sed -n 's/^http \(.*\)$/\1/p' "$work/node.log" | head -1)
    client=$(sed -n 's/^listening \(.*\)$/\1/p' "$work/node.log" | head -1)
    [ -n "$http" ] && [ -n "$client" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "the node did not start:" >&2
  cat "$work/node.log" >&2
  exit 1
}
