#!/usr/bin/env bash
# docs/walkthrough.md names code as `path/file.cpp:function` (or `path:class::member`).
# Each such file must exist and define or declare that name: the text `function(` in it
# (the last `::` part alone for a member declared in its class). Fails naming every stale
# reference, and when the page names none.
set -euo pipefail
root=${1:?usage: walkthrough.sh REPO_ROOT}
page="$root/docs/walkthrough.md"
[ -f "$page" ] || { echo "docs/walkthrough.md is missing"; exit 1; }

status=0
count=0
while IFS= read -r ref; do
  count=$((count + 1))
  file=${ref%%:*}
  name=${ref#*:}
  if [ ! -f "$root/$file" ]; then
    echo "docs/walkthrough.md: \`$ref\`: no file $file"
    status=1
    continue
  fi
  member=${name##*::}
  if ! grep -qE "(^|[^A-Za-z0-9_])$(sed 's/[]\/$*.^[]/\\&/g' <<<"$name")[[:space:]]*\(" "$root/$file" \
     && ! grep -qE "(^|[^A-Za-z0-9_:])${member}[[:space:]]*\(" "$root/$file"; then
    echo "docs/walkthrough.md: \`$ref\`: $file has no function $name"
    status=1
  fi
done < <(grep -oE '`[a-z_]+(/[A-Za-z0-9_.]+)+\.(cpp|hpp):[A-Za-z_][A-Za-z0-9_:]*`' "$page" | tr -d '`' | sort -u)

if [ $count -lt 10 ]; then
  echo "docs/walkthrough.md names $count functions; it should follow a workflow through the code"
  status=1
fi
[ $status = 0 ] && echo "walkthrough: $count references, all found"
exit $status
