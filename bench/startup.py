"""Start-up costs: module import time and the time from spawning an agent to ``initialize``.

``startup.py [--python P] [--import KEY=MODULE ...] [--protocol 1|2] [--runs R] [-- ARGV]``

* each ``--import KEY=MODULE`` runs ``P -X importtime -c "import MODULE"`` R times and
  reports the median cost of that import statement in ms under KEY (``KEY=PACKAGE:NAME``:
  ``from PACKAGE import NAME``, every module it loads);
* ``-- ARGV`` spawns the agent command R times, writes an ``initialize`` request at once
  and reports the median ms until its response line is read (``spawn_init_ms``).

Plain pipes and stdlib JSON on the driver side, so every implementation is timed alike.
Every measurement is preceded by one unmeasured warm-up run, with bytecode caching on
(``ACP2_BENCH_STARTUP_WARMUP=0``, which ``run.py --tiny`` sets, drops it: the tiny run
only shows that the measurement works, and a Python SDK's import costs seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from _common import emit_result, error_summary, median

CLIENT_INFO = {"name": "acp2-bench", "version": "0"}
#: The unmeasured runs before each measurement (see the module docstring).
WARMUP_ENV = "ACP2_BENCH_STARTUP_WARMUP"


def warmups() -> int:
    """The number of unmeasured warm-up runs before each measurement: 1, or
    ``$ACP2_BENCH_STARTUP_WARMUP``."""
    return max(0, int(os.environ.get(WARMUP_ENV, "1")))


def cached_bytecode_env() -> dict[str, str]:
    """Return our environment with bytecode caching allowed.

    With ``PYTHONDONTWRITEBYTECODE`` set, an editable install recompiles every module on
    every start, which is not what users see; the warm-up run writes the ``.pyc`` files.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def import_statement_us(stderr: str, module: str) -> int:
    """Return the cost in µs of ``import module`` from ``-X importtime`` output.

    That is the sum of the cumulative times of the top-level entries naming ``module`` or
    one of its parent packages (``import a.b`` imports ``a`` then ``a.b``).
    """
    parts = module.split(".")
    chain = {".".join(parts[: i + 1]) for i in range(len(parts))}
    total = 0
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line.split("|")
        if len(fields) != 3:
            continue
        name = fields[2].rstrip()
        if name.strip() in chain and not name.startswith("  "):
            total += int(fields[1])
    if total == 0:
        raise RuntimeError(f"no importtime entry for {module}")
    return total


def top_level_names(stderr: str) -> set[str]:
    """Return the modules ``-X importtime`` reports at the top level (not nested)."""
    names = set()
    for line in stderr.splitlines():
        fields = line.split("|")
        entry = line.startswith("import time:") and len(fields) == 3
        if entry and fields[1].strip().isdigit() and not fields[2].startswith("   "):
            names.add(fields[2].strip())
    return names


def statement_us(stderr: str, startup: set[str]) -> int:
    """Return the cost in µs of every top-level import not in ``startup`` (the modules the
    interpreter imports before running any statement): a ``from package import name``
    whose package resolves names lazily imports its modules as top-level entries."""
    total = 0
    for line in stderr.splitlines():
        fields = line.split("|")
        if not line.startswith("import time:") or len(fields) != 3:
            continue
        name = fields[2].rstrip()
        if fields[1].strip().isdigit() and not name.startswith("   "):
            total += 0 if name.strip() in startup else int(fields[1])
    return total


def _importtime(python: str, statement: str) -> str:
    done = subprocess.run(
        [python, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        check=False,
        env=cached_bytecode_env(),
    )
    if done.returncode != 0:
        raise RuntimeError(f"{statement} failed: {error_summary(done.stderr)}")
    return done.stderr


def import_ms(python: str, module: str, runs: int) -> float:
    """Return the median ms of ``import module`` in fresh interpreters (after one warm-up);
    ``package:name`` measures ``from package import name`` (every module it imports).

    Raises ``RuntimeError`` with the interpreter's last error line when the import fails.
    """
    package, _, name = module.partition(":")
    statement = f"from {package} import {name}" if name else f"import {module}"
    startup = top_level_names(_importtime(python, "pass")) if name else set()
    samples: list[float] = []
    skip = warmups()
    for i in range(runs + skip):
        stderr = _importtime(python, statement)
        if i >= skip:  # a warm-up run may compile .pyc files
            cost = statement_us(stderr, startup) if name else import_statement_us(stderr, module)
            samples.append(cost / 1000)
    return median(samples)


def initialize_line(protocol: int) -> bytes:
    """Return an ``initialize`` request for ACP v1 or v2, as one JSON line."""
    if protocol == 1:
        params: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
    else:
        params = {"protocolVersion": protocol, "info": CLIENT_INFO, "capabilities": {}}
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    return json.dumps(request, separators=(",", ":")).encode() + b"\n"


def spawn_to_initialize_ms(argv: Sequence[str], protocol: int, runs: int) -> float:
    """Return the median ms from spawning ``argv`` to reading its ``initialize`` response."""
    request = initialize_line(protocol)
    env = cached_bytecode_env()
    samples: list[float] = []
    skip = warmups()
    for i in range(runs + skip):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdin.write(request)
        proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - t0
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        error = proc.stderr.read().decode(errors="replace").strip()
        if not line or b'"result"' not in line:
            tail = error_summary(error) if error else line.decode(errors="replace").strip()
            raise RuntimeError(f"{' '.join(argv)}: no initialize result ({tail})")
        if i >= skip:
            samples.append(elapsed * 1000)
    return median(samples)


def main() -> None:
    """Command line; see the module docstring."""
    argv = sys.argv[1:]
    agent: list[str] = []
    if "--" in argv:
        split = argv.index("--")
        argv, agent = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--import", dest="imports", action="append", default=[])
    parser.add_argument("--protocol", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    metrics: dict[str, float] = {}
    for item in args.imports:
        key, _, module = item.partition("=")
        metrics[key] = import_ms(args.python, module, args.runs)
    if agent:
        metrics["spawn_init_ms"] = spawn_to_initialize_ms(agent, args.protocol, args.runs)
    emit_result(metrics)


if __name__ == "__main__":
    main()
