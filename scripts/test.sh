#!/usr/bin/env bash
# Sets up a virtualenv in .venv (pip runs only when pyproject.toml changed) and runs every
# check: ruff lint, ruff format, mypy --strict on src/, then the whole pytest suite
# (interop tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
ensure_venv dev
bash scripts/ensure-system-packages.sh || echo "ensure-system-packages failed: sandbox tests may skip" >&2
echo "== ruff check"; .venv/bin/ruff check src tests bench examples
echo "== ruff format"; .venv/bin/ruff format --check src tests bench examples
echo "== mypy --strict"; .venv/bin/mypy
echo "== pytest"
# The suite starts hundreds of `python -m acp2` subprocesses. Under PYTHONDONTWRITEBYTECODE
# (set in some sandboxes and CI images) a fresh checkout never gets .pyc files for the
# editable src/, so every one of them would compile acp2 again (~0.15 s CPU each).
# compileall writes them regardless, once, in about a second.
.venv/bin/python -m compileall -q src tests
set +e
# Four workers: many tests wait on subprocesses and pseudo-terminals rather than the CPU,
# so the suite takes about half as long as on one worker, even on 2 cores. Work stealing:
# test durations range from milliseconds to a minute, and under the default `load`
# schedule a worker that was handed a run of slow interop tests finished minutes after
# the others; `worksteal` lets idle workers take the tail of its queue.
.venv/bin/python -m pytest -n "${ACP2_TEST_WORKERS:-4}" --dist worksteal "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$rc"
