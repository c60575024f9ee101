#!/usr/bin/env bash
# The client library and the sample worker link proto/ and the plain transport only: no store,
# no engine, no actors, no libpq, no TLS (caf::openssl is the nodes' own). Reads CMake's own
# build graph (`--graphviz`) of a scratch configuration of the tree and prints every forbidden
# target either reaches.
set -euo pipefail
root=${1:?usage: client_links.sh REPO_ROOT}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$scratch/build" "${gen[@]}" --graphviz="$scratch/graph.dot" \
  >"$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; exit 1; }

# node id -> target name, and "from to" edges by name.
declare -A name
while IFS=$'\t' read -r id label; do name[$id]=$label; done < <(
  sed -nE 's/^[[:space:]]*"([^"]+)" \[ label = "([^"]+)".*/\1\t\2/p' "$scratch/graph.dot")
edges=$(sed -nE 's/^[[:space:]]*"([^"]+)" -> "([^"]+)".*/\1 \2/p' "$scratch/graph.dot")
[ ${#name[@]} -gt 0 ] && [ -n "$edges" ] || { echo "no build graph read"; exit 1; }

# Every target `start` links, directly or not.
reach() {
  local -A seen=()
  local queue=("$1")
  while [ ${#queue[@]} -gt 0 ]; do
    local cur=${queue[0]}; queue=("${queue[@]:1}")
    while read -r from to; do
      [ "${name[$from]:-}" = "$cur" ] || continue
      local t=${name[$to]:-}
      [ -n "$t" ] && [ -z "${seen[$t]+x}" ] && { seen[$t]=1; queue+=("$t"); echo "$t"; }
    done <<<"$edges"
  done
}

status=0
for target in nf_client nodeflow-sample-worker; do
  deps=$(reach "$target" | sort -u)
  [ -n "$deps" ] || { echo "$target: not in the build graph or links nothing"; status=1; continue; }
  bad=$(grep -xE 'nf_(store|engine|actors|net|cmd|flow|config)|caf::openssl|OpenSSL::.*|PostgreSQL::PostgreSQL|.*libpq.*' <<<"$deps" || true)
  if [ -n "$bad" ]; then
    echo "$target links what a worker must not: $(tr '\n' ' ' <<<"$bad")"
    status=1
  else
    echo "$target links: $(tr '\n' ' ' <<<"$deps")"
  fi
done
exit $status
