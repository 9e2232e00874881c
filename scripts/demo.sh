#!/usr/bin/env bash
# Sets up a virtualenv in .venv (once) and runs `acp2 demo` with any arguments given.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[all]"
exec .venv/bin/acp2 demo "$@"
