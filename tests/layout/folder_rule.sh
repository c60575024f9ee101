#!/usr/bin/env bash
# Which folder may include which (docs/layout.md): every `#include "folder/…"` of a source
# file must name its own folder or one its folder may depend on, and the folders' include
# graph must have no cycle. Prints each offending file:line and exits 1.
set -euo pipefail
root=${1:?usage: folder_rule.sh REPO_ROOT}
cd "$root"

# folder -> the folders its sources may include (its own is always allowed).
declare -A allowed=(
  [flow]=""
  [config]=""
  [proto]="flow"
  [store]="flow proto"
  [engine]="store proto flow config"
  [actors]="engine store proto flow config"
  [net]="actors engine store proto flow config"
  [net/client]="proto"
  [cmd]="net actors engine store proto flow config"
)
# Folders whose sources may include anything (they sit above every role).
free="tests bench"

status=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

# The rule that governs a file: its deepest folder with an entry, e.g. net/client/x.cpp.
rule_of() {
  local dir=$1
  while [ "$dir" != "." ]; do
    if [ -n "${allowed[$dir]+x}" ]; then echo "$dir"; return; fi
    dir=$(dirname "$dir")
  done
}

while IFS= read -r file; do
  top=${file%%/*}
  case " $free " in *" $top "*) continue ;; esac
  rule=$(rule_of "$(dirname "$file")")
  [ -n "$rule" ] || continue
  while IFS=: read -r line target; do
    dep=${target%%/*}
    [ -e "$dep" ] || continue            # a system header that happens to have a slash
    [ "$dep" = "$top" ] && [ "$rule" = "$top" ] && continue
    ok=0
    if [ "$rule" != "$top" ]; then
      # A sub-rule (net/client): its own subfolder and what it lists, nothing else.
      case "$target" in "$rule"/*) ok=1 ;; esac
    fi
    for a in ${allowed[$rule]}; do [ "$dep" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then
      echo "$file:$line: $rule/ may not include \"$target\" (allowed: $rule ${allowed[$rule]})"
      status=1
    fi
    [ "$dep" != "$top" ] && echo "$top $dep" >> "$edges"
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/' "$file" \
             | sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
done < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' 2>/dev/null || find . -name '*.[ch]pp' | sed 's#^\./##')

# No cycle between folders, whatever the table says.
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
  echo "the folders' include graph has a cycle:"
  cat "$edges.err"
  status=1
fi
rm -f "$edges.err"
[ $status = 0 ] && echo "folder rule: ok ($(sort -u "$edges" | wc -l) folder edges, no cycle)"
exit $status
