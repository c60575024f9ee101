#!/usr/bin/env bash
# The performance research log lives in docs/ (docs/perf/): code, build files, scripts,
# migrations and the other READMEs say why things are as they are, never which benchmark
# round showed it. Fails naming file:line for each "round N" (any case) outside docs/.
set -u
root=${1:?usage: research_log.sh REPO_ROOT}
cd "$root" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -d '' files < <(git ls-files -z -co --exclude-standard -- . ':!:docs/')
else
  mapfile -d '' files < <(find . -path ./.git -prune -o -path './build*' -prune \
                               -o -path ./docs -prune -o -type f -print0)
fi
if [ "${#files[@]}" -eq 0 ]; then
  echo "research_log: no files found under $root"
  exit 2
fi
hits=$(grep -n -I -i -E '\brounds? [0-9]' -- "${files[@]}" || true)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "research_log: the lines above cite a benchmark round outside docs/: say why in a few"
  echo "lines, and keep the round's measurements in docs/perf/ (see docs/perf/README.md)"
  exit 1
fi
echo "research_log: no round cited outside docs/ (${#files[@]} files)"
