#!/usr/bin/env bash
# The HTTP server refuses a query parameter its route does not declare (net/web/router.hpp,
# `misfit_query`), so a handler that reads a name no route declares could never see it: the
# parameter would be refused before the handler ran. This flags every name net/web reads
# (`query("x")`, `query_all("x")`, `query_int(ex, "x"`, `query_bool(ex, "x"`) that no
# route's parameter list (`{"x", "description"…}`) declares.
set -u
root=${1:?usage: query_params.sh REPO_ROOT}
cd "$root" || exit 2

reads=$(grep -rhoE '(query|query_all)\("[A-Za-z_]+"\)|query_(int|bool)\([a-z_]+, *"[A-Za-z_]+"' \
          --include='*.cpp' --include='*.hpp' net/web | grep -oE '"[A-Za-z_]+"' | sort -u)
[ -n "$reads" ] || { echo "query_params: found no query reads in net/web" >&2; exit 2; }
status=0
for name in $reads; do
  if ! grep -rqE "\{$name, *\"|\{$name,\$" --include='*.cpp' --include='*.hpp' net/web; then
    grep -rnE "(query|query_all)\($name\)|query_(int|bool)\([a-z_]+, *$name" net/web
    echo "query_params: $name is read but no route declares it (route::query)" >&2
    status=1
  fi
done
exit $status
