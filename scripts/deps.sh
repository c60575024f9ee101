#!/usr/bin/env bash
# Installs the Debian packages nodeflow builds against, only those missing.
# Safe to run repeatedly; needs root (or sudo) only when something is missing. tzdata is
# read at run time: schedules take IANA time zones from /usr/share/zoneinfo.
#
#   scripts/deps.sh            what building and running a node needs
#   scripts/deps.sh --tests    and what the tests need besides: faketime (a node's clock
#                              shifted), chromium (the web UI's tests, headless) and
#                              postgresql-client (psql, which they read the database with),
#                              clang and its libFuzzer runtime (scripts/fuzz-flow.sh)
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git
  libcaf-dev libpq-dev libboost-json1.81-dev libboost1.81-dev libspdlog-dev libsodium-dev libssl-dev
  duktape-dev libjq-dev pkg-config
  nodejs npm ca-certificates procps iproute2
  tzdata
)
case "${1:-}" in
  "") ;;
  --tests) packages+=(faketime chromium postgresql-client clang libclang-rt-14-dev) ;;
  *) echo "deps: unknown argument $1 (only --tests)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node may come from elsewhere than Debian (it only unpacks Postgres 18 here).
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done" >&2
