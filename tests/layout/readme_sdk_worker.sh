#!/usr/bin/env bash
# README.md shows a Conductor SDK worker taken from tests/sdk/conductor_sdk.test.js: the lines
# between its `// README: worker begin` and `// README: worker end` marks (indented two
# spaces there) must stand in the README as they are, so the README's worker is one the SDK
# test runs.
set -euo pipefail
root=${1:?usage: readme_sdk_worker.sh REPO_ROOT}
test_file="$root/tests/sdk/conductor_sdk.test.js"
region=$(sed -n '/\/\/ README: worker begin/,/\/\/ README: worker end/p' "$test_file" \
         | sed '1d;$d' | sed 's/^  //')
[ -n "$region" ] || { echo "$test_file: no README: worker region"; exit 1; }
readme=$(cat "$root/README.md")
if [[ "$readme" != *"$region"* ]]; then
  echo "README.md does not hold the worker region of tests/sdk/conductor_sdk.test.js as it is:"
  echo "$region"
  exit 1
fi
echo "readme_sdk_worker: the README's worker is the SDK test's ($(wc -l <<<"$region") lines)"
