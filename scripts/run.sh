#!/usr/bin/env bash
# nodeflow's quick start on this machine: installs what is missing, builds,
# starts an embedded Postgres 18 (unless NODEFLOW_DSN names your own) and a
# node, registers the sample workflow (config/samples/: fork/join, a retry
# after a failure, a wait, a sub-workflow), runs the sample worker, starts a
# batch of executions, shows their progress and prints a summary. The node and
# the worker stop at the end; Postgres is left running for the next steps
# (`scripts/pg18.sh stop DATADIR` stops it).
#   NODEFLOW_DSN    use this Postgres 18 instead of the embedded one
#   NODEFLOW_DATA   where the embedded cluster lives
#   NF_BUILD_DIR    build directory (default: build/ in the repository)
#   NF_RUN_COUNT    executions to start (default 200, at most 1000)
#   NF_RUN_PORT     the node's client port (default 4510)
#   NF_RUN_HTTP_PORT  the node's HTTP port (default 8080)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
count=${NF_RUN_COUNT:-200}
port=${NF_RUN_PORT:-4510}
node=127.0.0.1:$port

step() { printf '\n==> %s\n' "$*"; }
die() { echo "run.sh: $*" >&2; exit 1; }
# A DSN as shown: its password (URI user:PASSWORD@, password=…) masked, as nodeflow does.
shown_dsn() {
  sed -E "s#(://[^:/?@[:space:]]*:)[^@/[:space:]]*@#\\1***@#g; s#([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*=[[:space:]]*)('[^']*'|[^[:space:]&]*)#\\1***#g" <<<"$1"
}
[[ $count =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] && [ "$count" -le 1000 ] \
  || die "NF_RUN_COUNT must be 1 … 1000, got '$count'"

step "installing build dependencies (only what is missing)"
"$root/scripts/deps.sh"

step "building nodeflow"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target nodeflow nodeflow-sample-worker
nf=$build/cmd/nodeflow

dsn=${NODEFLOW_DSN:-}
if [ -z "$dsn" ]; then
  if [ "$(id -u)" -eq 0 ]; then data=${NODEFLOW_DATA:-/var/lib/nodeflow/postgres}
  else data=${NODEFLOW_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/nodeflow/postgres}; fi
  step "starting Postgres 18 in $data"
  mkdir -p "$(dirname "$data")"
  chmod 755 "$(dirname "$data")"
  dsn=$("$root/scripts/pg18.sh" start "$data" | tail -1)
  echo "postgres: $(shown_dsn "$dsn") (stop with: scripts/pg18.sh stop $data)"
fi

step "migrating"
"$nf" migrate --dsn "$dsn"

work=$(mktemp -d /tmp/nodeflow-run.XXXXXX)
serve_pid=""
worker_pid=""
cleanup() {
  [ -n "$worker_pid" ] && kill "$worker_pid" 2>/dev/null && wait "$worker_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
}
trap cleanup EXIT

step "starting a node on $node (log: $work/serve.log)"
"$nf" serve --dsn "$dsn" --port "$port" --http-port "${NF_RUN_HTTP_PORT:-8080}" --auth off >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
for _ in $(seq 1 300); do
  grep -q '^listening ' "$work/serve.out" 2>/dev/null && break
  kill -0 "$serve_pid" 2>/dev/null || { tail -20 "$work/serve.log" >&2; die "the node did not start"; }
  sleep 0.1
done
grep -q '^listening ' "$work/serve.out" || die "the node did not listen within 30 s (see $work/serve.log)"
cat "$work/serve.out"

step "registering the sample definitions"
"$nf" defs put --node "$node" "$root/config/samples/tasks.json" \
  "$root/config/samples/sample_shipping.json" "$root/config/samples/sample_order.json"

step "starting the sample worker (log: $work/worker.log)"
"$build/cmd/nodeflow-sample-worker" --node "$node" --concurrency 8 \
  >"$work/worker.out" 2>"$work/worker.log" &
worker_pid=$!

step "starting $count executions of sample_order"
input='{"orderId":"A-1001","items":[{"sku":"mug","qty":2,"priceCents":1250},{"sku":"tea","qty":1,"priceCents":899}],"customer":{"email":"ada@example.com","address":"1 Analytical Street"}}'
t0=$(date +%s.%N)
t0_ms=$(date +%s%3N)
"$nf" start sample_order --count "$count" --input "$input" --node "$node" >"$work/ids"
echo "started $(wc -l <"$work/ids") executions"

# How many of this run's sample_order executions have status $1.
count_status() {
  "$nf" search --node "$node" --name sample_order --status "$1" --started-after "$t0_ms" \
    --limit 1000 --json | { grep -o '"workflowId"' || true; } | wc -l
}

step "progress"
# On a terminal one line rewritten in place; in a log one line per check.
if [ -t 1 ]; then eol='\r'; else eol='\n'; fi
deadline=$(( $(date +%s) + 120 ))
while :; do
  completed=$(count_status COMPLETED)
  failed=$(( $(count_status FAILED) + $(count_status TIMED_OUT) + $(count_status TERMINATED) ))
  running=$(count_status RUNNING)
  printf "  running %4d   completed %4d   failed %4d$eol" "$running" "$completed" "$failed"
  [ $(( completed + failed )) -ge "$count" ] && break
  if [ "$(date +%s)" -ge "$deadline" ]; then echo; echo "run.sh: gave up waiting after 120 s" >&2; break; fi
  sleep 1
done
[ -t 1 ] && echo
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')

kill "$worker_pid" 2>/dev/null && wait "$worker_pid" 2>/dev/null || true
worker_pid=""
tasks=$(grep -oE '^sample worker: [0-9]+' "$work/worker.out" | grep -oE '[0-9]+$' || echo 0)
retried=$(grep -oE '[0-9]+ failed' "$work/worker.out" | grep -oE '^[0-9]+' || echo 0)

step "one execution"
"$nf" get --node "$node" "$(head -1 "$work/ids")"

step "summary"
printf '  executions  %d started, %d completed, %d failed\n' "$count" "$completed" "$failed"
printf '  tasks       %d completed by the sample worker, %d failed (charge_card fails its first attempt; the engine retries it)\n' "$tasks" "$retried"
awk -v e="$elapsed" -v t="$tasks" -v c="$completed" \
  'BEGIN { printf "  elapsed     %.1f s   (%.0f tasks/s, %.0f workflows/s)\n", e, t / e, c / e }'
echo "  next: $nf status --node $node   (while a node runs: $nf serve --dsn '$(shown_dsn "$dsn")')"
echo "        the web UI of a running node: http://127.0.0.1:${NF_RUN_HTTP_PORT:-8080}/"
[ "$completed" -eq "$count" ]
