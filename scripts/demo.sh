#!/usr/bin/env bash
# Sets up a virtualenv in .venv (pip runs only on the first run and after pyproject.toml
# changed) and runs `acp2 demo` with any arguments given.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
ensure_venv all dev
exec .venv/bin/acp2 demo "$@"
