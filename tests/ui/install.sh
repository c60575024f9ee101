#!/usr/bin/env bash
# Installs the pinned Playwright library (tests/ui/package-lock.json: playwright-core only, it
# drives Debian's /usr/bin/chromium and downloads no browser) into BUILD/ui-node, again only
# when the lock file changed. Used by tests/ui/run.sh and bench/ui/run.
#
#   tests/ui/install.sh BUILD_DIR     prints the folder it installed into
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: install.sh BUILD_DIR}
command -v node >/dev/null && command -v npm >/dev/null \
  || { echo "node and npm are needed (scripts/deps.sh installs them)" >&2; exit 1; }
lib="$(cd "$build" && pwd)/ui-node"
mkdir -p "$lib"
if ! cmp -s "$here/package-lock.json" "$lib/package-lock.json" || [ ! -d "$lib/node_modules" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$lib/"
  (cd "$lib" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "$lib"
