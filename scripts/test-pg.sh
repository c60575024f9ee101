#!/usr/bin/env bash
# The test suite's own Postgres 18 (a ctest fixture): `start DIR` starts a fresh
# cluster on a free port and writes its DSN to DIR/dsn; `stop DIR` stops it and
# removes DIR. With NF_TEST_DSN set, that server is used and nothing is started.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}; dir=${2:-}
# A DSN as shown: its password (URI user:PASSWORD@, password=…) masked, as nodeflow does.
shown_dsn() {
  sed -E "s#(://[^:/?@[:space:]]*:)[^@/[:space:]]*@#\\1***@#g; s#([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*=[[:space:]]*)('[^']*'|[^[:space:]&]*)#\\1***#g" <<<"$1"
}
[ -n "$dir" ] || { echo "usage: test-pg.sh start|stop DIR" >&2; exit 2; }
case "$cmd" in
  start)
    "$here/test-pg.sh" stop "$dir"   # a crashed earlier run may have left one behind
    mkdir -p "$dir"
    chmod 755 "$dir"
    if [ -n "${NF_TEST_DSN:-}" ]; then
      echo "$NF_TEST_DSN" >"$dir/dsn"
    else
      "$here/pg18.sh" start "$dir/data" | tail -1 >"$dir/dsn"
    fi
    echo "test postgres: $(shown_dsn "$(cat "$dir/dsn")")"
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    [ -d "$dir/data" ] && "$here/pg18.sh" stop "$dir/data"
    rm -rf "$dir"
    ;;
  *) echo "usage: test-pg.sh start|stop DIR" >&2; exit 2 ;;
esac
