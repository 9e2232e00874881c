"""Run acp2's benchmarks and their baselines; print one table with every target's status.

    .venv/bin/python bench/run.py [--quick | --tiny] [--only SCENARIOS] [--impl IMPLS]
                                  [--reps N] [--json FILE]

Scenarios: ``stream`` (throughput of N ``agent_message_chunk`` updates over stdio),
``rtt`` (ping and empty-prompt round trips), ``replay`` (resume with full replay),
``sessions`` (many sessions on one connection), ``startup`` (imports, spawn -> init),
``bridge`` (what the v1 bridges add, against the same agents spoken to directly: acp2 only),
``timeline`` (the stages of one prompt round trip in both processes: acp2 only),
``remote`` (``connect_url`` against ``acp2 serve``: stream throughput over WebSocket and
SSE with both processes' CPU per update, reconnect-to-resumed p50 through a cutting proxy,
memory per idle connection; the TS SDK's baseline is its ws-client / http-client against
its experimental server, ``ts_remote.py``; bench/remote_stream.py has raw clients).
Implementations: ``acp2`` (the ``acp2_*.py`` hooks), ``raw`` (pipe + JSON parsing, no
protocol), ``py-sdk`` (official Python SDK 0.12.1, ACP v1, in its own venv) and ``ts-sdk``
(official TypeScript SDK 2.4.0, ACP v2 entry point). Every measurement runs in fresh
processes, ``--reps`` times (3 in full mode, 1 with ``--quick``), the implementations'
repetitions interleaved; the table shows medians.
``--tiny`` shrinks every size so the whole run takes seconds (used by the test suite), and
drops the start-up scenario's warm-up runs.
Exit status: 0 when every scenario ran or was skipped with a reason, 1 when one failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _provision
from _common import RESULT_PREFIX, SKIP_PREFIX, error_summary
from _table import IMPLS, render, table_rows

BENCH_DIR = Path(__file__).resolve().parent
SCENARIOS = ("stream", "rtt", "replay", "sessions", "startup", "bridge", "timeline", "remote")
#: Scenarios only acp2 runs (they hold their own baselines or instrument acp2 itself).
ACP2_ONLY = ("bridge", "timeline")
#: Scenarios whose only baseline is the TypeScript SDK (its remote server and clients).
TS_BASELINE_ONLY = ("remote",)


@dataclass(frozen=True)
class Sizes:
    """How much work each scenario does, and how many times each is repeated."""

    updates: int
    pings: int
    prompts: int
    warmup: int
    replay: int
    sessions: int
    window: int
    runs: int
    reps: int
    timeout: float

    def driver_args(self) -> list[str]:
        """Return the size options every scenario driver accepts."""
        names = ("updates", "pings", "prompts", "warmup", "replay", "sessions", "window")
        return [item for name in names for item in (f"--{name}", str(getattr(self, name)))]


FULL = Sizes(100_000, 5000, 2000, 200, 10_000, 1000, 64, 5, reps=3, timeout=900)
QUICK = Sizes(100_000, 1000, 300, 50, 10_000, 1000, 64, 3, reps=1, timeout=300)
TINY = Sizes(200, 20, 10, 2, 100, 10, 4, 1, reps=1, timeout=120)


@dataclass
class Outcome:
    """What one implementation produced for one scenario (medians over repetitions)."""

    status: str  # "ok", "skip", "error" or "-" (does not apply)
    metrics: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    skipped: dict[str, str] = field(default_factory=dict)
    reps: list[dict[str, Any]] = field(default_factory=list)


#: How each baseline's environment is made (``_provision``).
MAKERS: dict[str, Callable[[], Path]] = {
    "py-sdk": _provision.ensure_sdk_venv,
    "py-sdk2": _provision.ensure_sdk2_venv,
    "ts-sdk": _provision.ensure_ts_peers,
}


class Environments:
    """The baselines' environments, provisioned once per run on first use."""

    def __init__(self) -> None:
        self._cache: dict[str, Path | _provision.Unavailable] = {}

    def _get(self, name: str) -> Path:
        if name not in self._cache:
            make = MAKERS[name]
            if not _provision.is_ready(name):
                progress(f"preparing the {name} environment (first run only: downloads)")
            try:
                self._cache[name] = make()
            except _provision.Unavailable as exc:
                self._cache[name] = exc
        found = self._cache[name]
        if isinstance(found, _provision.Unavailable):
            raise found
        return found

    def sdk_python(self) -> str:
        """Return the official Python SDK 0.12.1 venv's interpreter."""
        return str(self._get("py-sdk"))

    def sdk2_python(self) -> str:
        """Return the official Python SDK 1.0.0rc3 venv's interpreter."""
        return str(self._get("py-sdk2"))

    def ts_folder(self) -> Path:
        """Return the folder with the TypeScript SDK installed and the peers copied in."""
        return self._get("ts-sdk")


def _script(name: str, *args: str | int) -> list[str]:
    """Return the argv running ``bench/name`` with the project's interpreter."""
    return [sys.executable, str(BENCH_DIR / name), *map(str, args)]


def _acp2_command(scenario: str, sizes: Sizes, envs: Environments) -> list[str] | None:
    return _script(f"acp2_{scenario}.py", *sizes.driver_args(), "--runs", sizes.runs)


def _raw_command(scenario: str, sizes: Sizes, envs: Environments) -> list[str] | None:
    if scenario == "stream":
        return _script("raw_stream.py", "--updates", sizes.updates)
    if scenario == "rtt":
        return _script("raw_ping.py", "--pings", sizes.pings, "--warmup", sizes.warmup)
    return None


def _py_sdk_command(scenario: str, sizes: Sizes, envs: Environments) -> list[str] | None:
    if scenario in ACP2_ONLY + TS_BASELINE_ONLY:
        return None  # the bridge scenario holds its own baselines
    sdk = envs.sdk_python()
    agent = str(BENCH_DIR / "sdk_agent.py")
    if scenario == "startup":
        options = ("--python", sdk, "--import", "import_ms=acp", "--protocol", 1)
        return _script("startup.py", "--runs", sizes.runs, *options, "--", sdk, agent)
    return [sdk, str(BENCH_DIR / "sdk_client.py"), scenario, *sizes.driver_args()]


def _py_sdk2_command(scenario: str, sizes: Sizes, envs: Environments) -> list[str] | None:
    if scenario in ACP2_ONLY + TS_BASELINE_ONLY:
        return None
    sdk = envs.sdk2_python()
    agent = str(BENCH_DIR / "sdk2_agent.py")
    if scenario == "startup":
        options = ("--python", sdk, "--import", "import_ms=acp.experimental.v2", "--protocol", 2)
        return _script("startup.py", "--runs", sizes.runs, *options, "--", sdk, agent)
    return [sdk, str(BENCH_DIR / "sdk2_client.py"), scenario, *sizes.driver_args()]


def _ts_sdk_command(scenario: str, sizes: Sizes, envs: Environments) -> list[str] | None:
    if scenario in ACP2_ONLY:
        return None
    node = _provision.node_binary()
    folder = envs.ts_folder()
    if scenario == "startup":
        agent = str(folder / "agent.mjs")
        return _script("startup.py", "--runs", sizes.runs, "--protocol", 2, "--", node, agent)
    if scenario == "remote":
        where = ("--folder", str(folder), "--node", node)
        return _script("ts_remote.py", *where, *sizes.driver_args(), "--runs", sizes.runs)
    return [node, str(folder / "client.mjs"), scenario, *sizes.driver_args()]


COMMANDS = {
    "acp2": _acp2_command,
    "raw": _raw_command,
    "py-sdk": _py_sdk_command,
    "py-sdk2": _py_sdk2_command,
    "ts-sdk": _ts_sdk_command,
}


def command(impl: str, scenario: str, sizes: Sizes, envs: Environments) -> list[str] | None:
    """Return the argv that measures ``scenario`` for ``impl`` once, or None if n/a.

    Raises :class:`_provision.Unavailable` when the baseline cannot run here.
    """
    return COMMANDS[impl](scenario, sizes, envs)


def run_once(argv: list[str], timeout: float) -> tuple[str, dict[str, Any], str]:
    """Run one measurement process; return (status, metrics, reason)."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, cwd=BENCH_DIR, check=False
        )
    except subprocess.TimeoutExpired:
        return "error", {}, f"timed out after {timeout:.0f} s"
    for line in done.stdout.splitlines():
        if line.startswith(SKIP_PREFIX) and done.returncode == 0:
            return "skip", {}, line[len(SKIP_PREFIX) :].strip()
        if line.startswith(RESULT_PREFIX) and done.returncode == 0:
            return "ok", json.loads(line[len(RESULT_PREFIX) :]), ""
    return "error", {}, f"exit code {done.returncode}: {error_summary(done.stderr)}"


def medians(reps: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Return the median of every numeric metric the repetitions share."""
    keys = set.intersection(*(set(rep) for rep in reps))
    numeric = [k for k in sorted(keys) if all(isinstance(rep[k], int | float) for rep in reps)]
    return {k: float(statistics.median(rep[k] for rep in reps)) for k in numeric}


def _commands(
    scenario: str, impls: Sequence[str], sizes: Sizes, envs: Environments
) -> tuple[dict[str, Outcome], dict[str, list[str]]]:
    """The outcomes known without running anything (skipped, does not apply), and the
    argv of every implementation that runs."""
    outcomes: dict[str, Outcome] = {}
    argvs: dict[str, list[str]] = {}
    for impl in impls:
        try:
            argv = command(impl, scenario, sizes, envs)
        except _provision.Unavailable as exc:
            outcomes[impl] = Outcome("skip", reason=str(exc))
            continue
        if argv is None:
            outcomes[impl] = Outcome("-")
        else:
            argvs[impl] = argv
    return outcomes, argvs


def measure(
    scenario: str, impls: Sequence[str], sizes: Sizes, envs: Environments
) -> dict[str, Outcome]:
    """Run ``scenario`` for every one of ``impls``, ``sizes.reps`` times each in fresh
    processes, the repetitions interleaved (acp2 1, ts-sdk 1, acp2 2, ts-sdk 2, ...): the
    machine's load drifts, and a ratio is fair only between runs made under about the
    same load. An implementation whose repetition fails stops there."""
    outcomes, argvs = _commands(scenario, impls, sizes, envs)
    reps: dict[str, list[dict[str, Any]]] = {impl: [] for impl in argvs}
    for rep in range(sizes.reps):
        for impl, argv in argvs.items():
            if impl in outcomes:
                continue
            t0 = time.perf_counter()
            status, metrics, reason = run_once(argv, sizes.timeout)
            took = time.perf_counter() - t0
            shown = f"{scenario:8} {impl:6} {rep + 1}/{sizes.reps} {status:5} {took:6.1f} s"
            progress(f"{shown} {reason}")
            if status != "ok":
                outcomes[impl] = Outcome(status, reason=reason, reps=reps[impl])
            else:
                reps[impl].append(metrics)
    for impl, done in reps.items():
        if impl not in outcomes:
            skipped = dict(done[0].get("_skipped", {}))
            outcomes[impl] = Outcome("ok", medians(done), skipped=skipped, reps=done)
    return {impl: outcomes[impl] for impl in impls}


def progress(text: str) -> None:
    """Report progress on stderr (stdout carries the table)."""
    print(text.rstrip(), file=sys.stderr, flush=True)


def machine_info() -> dict[str, str]:
    """Return the machine details the report starts with."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = "absent"
    if shutil.which("node"):
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": cpu,
        "logical_cores": str(os.cpu_count()),
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "node": node,
        "os": platform.platform(),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def report(
    results: dict[str, dict[str, Outcome]], impls: Sequence[str], scenarios: Sequence[str]
) -> str:
    """Return the table and the notes explaining every n/a."""
    values = {
        i: {f"{s}.{k}": v for s, o in results[i].items() for k, v in o.metrics.items()}
        for i in impls
    }
    absent: dict[str, dict[str, str]] = {i: {} for i in impls}
    notes: list[str] = []
    for impl in impls:
        for scenario, outcome in results[impl].items():
            if outcome.status == "-":
                continue
            if outcome.status in ("skip", "error"):
                absent[impl][scenario] = "n/a"
                kind = "failed" if outcome.status == "error" else "skipped"
                notes.append(f"- {impl} / {scenario} {kind}: {outcome.reason}")
            for metric, reason in outcome.skipped.items():
                absent[impl][f"{scenario}.{metric}"] = "n/a"
                notes.append(f"- {impl} / {scenario}.{metric} skipped: {reason}")
    text = render(table_rows(values, absent, impls, scenarios))
    return text + ("\n\nNotes:\n" + "\n".join(notes) if notes else "")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="smaller sizes, 1 repetition (< 2 min)")
    mode.add_argument("--tiny", action="store_true", help="tiny sizes, for the harness test")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument("--impl", default=",".join(IMPLS), help="comma-separated implementations")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per measurement")
    parser.add_argument("--json", type=Path, default=None, help="also write all results here")
    args = parser.parse_args(argv)
    for name, known in (("only", SCENARIOS), ("impl", IMPLS)):
        chosen = [item.strip() for item in getattr(args, name).split(",") if item.strip()]
        unknown = sorted(set(chosen) - set(known))
        if unknown:
            parser.error(f"--{name}: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
        setattr(args, name, [item for item in known if item in chosen])
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected benchmarks, print the table, return the exit status."""
    args = parse_args(argv)
    sizes = TINY if args.tiny else QUICK if args.quick else FULL
    if args.reps is not None:
        sizes = dataclasses.replace(sizes, reps=max(1, args.reps))
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    if args.tiny:  # no warm-up runs in the start-up scenario: see bench/startup.py
        os.environ.setdefault("ACP2_BENCH_STARTUP_WARMUP", "0")
    envs = Environments()
    load = os.getloadavg()
    load_at_start = " ".join(f"{x:.2f}" for x in load)
    results: dict[str, dict[str, Outcome]] = {impl: {} for impl in args.impl}
    t0 = time.perf_counter()
    for scenario in args.only:
        for impl, outcome in measure(scenario, args.impl, sizes, envs).items():
            results[impl][scenario] = outcome
    machine = machine_info()
    machine["load_average"] = f"{load_at_start} at start, {machine['load_average']} at end"
    print(f"# acp2 benchmarks ({mode} mode, {sizes.reps} repetition(s), medians)\n")
    for key, value in machine.items():
        print(f"- {key}: {value}")
    print(f"- sizes: {json.dumps(dataclasses.asdict(sizes))}")
    print(f"- wall time: {time.perf_counter() - t0:.0f} s")
    cores = os.cpu_count() or 1
    if max(load[0], os.getloadavg()[0]) > 0.5 * cores:
        print(f"- WARNING: load average above {0.5 * cores:g} on {cores} cores: other processes")
        print("  competed for the CPU; expect noise, rerun on an idle machine for the record")
    print()
    print(report(results, args.impl, args.only))
    if args.json is not None:
        data = {
            "mode": mode,
            "machine": machine,
            "sizes": dataclasses.asdict(sizes),
            "results": {
                i: {s: dataclasses.asdict(o) for s, o in r.items()} for i, r in results.items()
            },
        }
        args.json.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    failed = any(o.status == "error" for r in results.values() for o in r.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
