#!/usr/bin/env bash
# The web UI in a real headless Chromium (ctest label `ui`): installs the pinned Playwright
# library (install.sh) into BUILD/ui-node once, starts a Postgres 18 and a `nodeflow serve`
# of its own with authentication on, makes an admin user, a reader and an admin API key, and
# runs ui.test.js against the node's own UI (served from the binary).
#
#   tests/ui/run.sh NODEFLOW_BIN BUILD_DIR [SCREENSHOT_DIR]
#
# With SCREENSHOT_DIR it also runs the sample workflows with the sample worker and saves the
# list, an execution's diagram and the cluster page there (docs/img, by `ninja ui_screenshots`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:?usage: run.sh NODEFLOW_BIN BUILD_DIR [SCREENSHOT_DIR]}
build=${2:?usage: run.sh NODEFLOW_BIN BUILD_DIR [SCREENSHOT_DIR]}
shots=${3:-}

die() { echo "ui test: $*" >&2; exit 1; }
chromium=${NF_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || die "Chromium is needed at $chromium (scripts/deps.sh --tests installs Debian's chromium)"
psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1 || true)
[ -n "$psql" ] || die "psql is needed to read the database (scripts/deps.sh --tests installs postgresql-client)"

lib=$("$here/install.sh" "$build")
cp "$here/ui.test.js" "$lib/"

source "$root/tests/support/test_node.sh"
nf_test_begin
nf_test_postgres
nf_test_serve "$bin" --auth on

# An admin and a reader who sign in with a password, and an admin key for the test's own setup.
export NF_UI_ADMIN=ada NF_UI_ADMIN_PASSWORD=correct-horse-battery NF_UI_READER=rita
export NF_UI_READER_PASSWORD=staple-staple-staple
"$bin" users create "$NF_UI_ADMIN" --dsn "$dsn" --role admin <<<"$NF_UI_ADMIN_PASSWORD" >/dev/null
"$bin" users create "$NF_UI_READER" --dsn "$dsn" --role reader <<<"$NF_UI_READER_PASSWORD" >/dev/null
key=$("$bin" keys create --dsn "$dsn" --role admin --name ui-test | tail -1)
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$2"; }
export NF_UI_KEY_ID=$(field keyId "$key") NF_UI_KEY_SECRET=$(field keySecret "$key")
[ -n "$NF_UI_KEY_SECRET" ] || die "nodeflow keys create printed no key"

if [ -n "$shots" ]; then
  # Sample workflows in every state worth a picture: run by the sample worker.
  export NODEFLOW_KEY_ID=$NF_UI_KEY_ID NODEFLOW_KEY_SECRET=$NF_UI_KEY_SECRET
  "$bin" defs put --node "$client" "$root/config/samples/tasks.json" \
    "$root/config/samples/sample_shipping.json" "$root/config/samples/sample_order.json" >/dev/null
  "$(dirname "$bin")/nodeflow-sample-worker" --node "$client" --concurrency 4 \
    >"$work/worker.out" 2>"$work/worker.log" &
  nf_test_spawned $!
  input='{"orderId":"A-1001","items":[{"sku":"mug","qty":2,"priceCents":1250}],"customer":{"email":"ada@example.com","address":"1 Analytical Street"}}'
  "$bin" start sample_order --count 40 --input "$input" --node "$client" >/dev/null
  mkdir -p "$shots"
  export NF_UI_SCREENSHOTS=$(cd "$shots" && pwd)
fi

status=0
(cd "$lib" && NF_UI_URL="http://$http" NF_UI_DSN="$dsn" NF_UI_PSQL="$psql" NF_CHROMIUM="$chromium" \
   NODE_PATH="$lib/node_modules" node --test --test-concurrency=1 ui.test.js) || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- node log (tail)" >&2
  tail -n 60 "$work/node.log" >&2
fi
exit "$status"
