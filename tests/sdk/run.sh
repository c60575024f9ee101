#!/usr/bin/env bash
# The Conductor JavaScript SDK against nodeflow (ctest label `sdk`): installs the pinned SDK
# (package-lock.json) into BUILD/sdk-node once, starts a Postgres 18 and a `nodeflow serve`
# of its own with authentication on, makes a worker and an admin API key (`nodeflow keys
# create`) and runs conductor_sdk.test.js with CONDUCTOR_SERVER_URL pointing at the node.
#
#   tests/sdk/run.sh NODEFLOW_BIN BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:?usage: run.sh NODEFLOW_BIN BUILD_DIR}
build=${2:?usage: run.sh NODEFLOW_BIN BUILD_DIR}

command -v node >/dev/null && command -v npm >/dev/null \
  || { echo "sdk test: node and npm are needed (scripts/deps.sh installs them)" >&2; exit 1; }

# The SDK, installed again only when the lock file changed.
sdk="$build/sdk-node"
mkdir -p "$sdk"
if ! cmp -s "$here/package-lock.json" "$sdk/package-lock.json" || [ ! -d "$sdk/node_modules" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$sdk/"
  (cd "$sdk" && npm ci --legacy-peer-deps --no-audit --no-fund --loglevel=error)
fi
cp "$here/conductor_sdk.test.js" "$sdk/"

source "$root/tests/support/test_node.sh"
nf_test_begin
nf_test_postgres
nf_test_serve "$bin"

# Authentication is on (the default): a worker key for the workers, an admin key for the
# definitions and the workflows. `keys create` prints `keyId=… keySecret=…` last.
key_of() {
  "$bin" keys create --dsn "$dsn" --role "$1" --name "sdk-$1" | tail -1
}
worker_key=$(key_of worker)
admin_key=$(key_of admin)
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$2"; }
export NF_SDK_WORKER_KEY=$(field keyId "$worker_key") NF_SDK_WORKER_SECRET=$(field keySecret "$worker_key")
export NF_SDK_ADMIN_KEY=$(field keyId "$admin_key") NF_SDK_ADMIN_SECRET=$(field keySecret "$admin_key")
[ -n "$NF_SDK_WORKER_SECRET" ] && [ -n "$NF_SDK_ADMIN_SECRET" ] \
  || { echo "sdk test: nodeflow keys create printed no key" >&2; exit 1; }

status=0
(cd "$sdk" && CONDUCTOR_SERVER_URL="http://$http" NODE_PATH="$sdk/node_modules" \
   node conductor_sdk.test.js) || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- node log (tail)" >&2
  tail -n 60 "$work/node.log" >&2
fi
exit "$status"
