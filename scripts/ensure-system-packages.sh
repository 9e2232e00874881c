#!/usr/bin/env bash
# Installs the system packages some tests need -- bubblewrap (the sandboxed run_command
# tests), PostgreSQL (the PostgreSQL store's tests start a throwaway cluster with its
# initdb/pg_ctl/postgres) and HAProxy (the load balancer of the scale-out tests) -- but
# only where that is ours to do: in CI ($CI set) or as root, with apt-get. Elsewhere it
# does nothing and those tests skip, saying why. Idempotent, and quick when everything is
# installed already (no package index update then).
set -euo pipefail

# PostgreSQL's server programs live in /usr/lib/postgresql/<version>/bin on Debian, not
# on PATH (tests/helpers/postgres.py looks there too).
has_postgres() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}
has() { command -v "$1" >/dev/null 2>&1; }

missing=()
has bwrap || missing+=(bubblewrap)
has_postgres || missing+=(postgresql)
has haproxy || missing+=(haproxy)
[ "${#missing[@]}" -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "no apt-get: not installing ${missing[*]}" >&2; exit 0; }
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif [ -n "${CI:-}" ] && command -v sudo >/dev/null 2>&1; then
  sudo=(sudo -n)
else
  echo "not root and not CI: not installing ${missing[*]} (its tests will skip)" >&2
  exit 0
fi
echo "== installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
  "${sudo[@]}" apt-get update -qq >/dev/null
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
