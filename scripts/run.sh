#!/usr/bin/env bash
# nodeflow's main job on this machine: installs what is missing, builds, starts
# an embedded Postgres 18 (unless NODEFLOW_DSN names your own), migrates it and
# prints the readiness report. Postgres is left running for the next steps;
# `scripts/pg18.sh stop DATADIR` stops it.
#   NODEFLOW_DSN    use this Postgres 18 instead of the embedded one
#   NODEFLOW_DATA   where the embedded cluster lives
#   NF_BUILD_DIR    build directory (default: build/ in the repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}

step() { printf '\n==> %s\n' "$*"; }

step "installing build dependencies (only what is missing)"
"$root/scripts/deps.sh"

step "building nodeflow"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target nodeflow

dsn=${NODEFLOW_DSN:-}
if [ -z "$dsn" ]; then
  if [ "$(id -u)" -eq 0 ]; then data=${NODEFLOW_DATA:-/var/lib/nodeflow/postgres}
  else data=${NODEFLOW_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/nodeflow/postgres}; fi
  step "starting Postgres 18 in $data"
  mkdir -p "$(dirname "$data")"
  chmod 755 "$(dirname "$data")"
  dsn=$("$root/scripts/pg18.sh" start "$data" | tail -1)
  echo "postgres: $dsn (stop with: scripts/pg18.sh stop $data)"
fi

step "migrating"
"$build/cmd/nodeflow" migrate --dsn "$dsn"

step "readiness"
"$build/cmd/nodeflow" readiness --dsn "$dsn"
