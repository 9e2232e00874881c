#!/usr/bin/env bash
# Installs the system packages some tests need (bubblewrap, for the sandboxed run_command
# tests), but only where that is ours to do: in CI ($CI set) or as root, with apt-get.
# Elsewhere it does nothing and those tests skip, saying why. Idempotent, and quick when
# everything is installed already (no package index update then).
set -euo pipefail
packages=(bubblewrap)
commands=(bwrap)
missing=()
for i in "${!packages[@]}"; do
  command -v "${commands[$i]}" >/dev/null 2>&1 || missing+=("${packages[$i]}")
done
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
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
  "${sudo[@]}" apt-get update -qq >/dev/null
  "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}
