"""Create the baselines' private environments on demand, under a cache folder.

Nothing here touches the project venv. The official Python SDK 0.12.1 (ACP v1) goes into
its own venv (``<cache>/venv-acp012``); the Python SDK 1.0.0rc3 (``acp.experimental.v2``)
into ``<cache>/venv-acp100rc3-<hash>``, installed hash-locked from the interop tests'
lockfile (``tests/interop/py/requirements-v2.txt``, one pin for both uses); the official
TypeScript SDK into a folder named after the hash of ``bench/ts/package-lock.json``
(``<cache>/ts-<hash>``), installed with ``npm ci``.
Both are built in a temporary folder and renamed into place once complete, so an
interrupted install is simply retried next time. The cache is ``$ACP2_BENCH_CACHE`` or
``~/.cache/acp2/bench``.

Each ``ensure_*`` function returns the ready environment or raises :class:`Unavailable`
with a one-line reason (no network, no node, ...), which the harness shows as n/a.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
TS_DIR = BENCH_DIR / "ts"
SDK_REQUIREMENTS = ("agent-client-protocol==0.12.1", "orjson")
SDK_VENV_NAME = "venv-acp012"
#: The lockfile of the Python SDK 1.0.0rc3 (ACP v2), shared with the interop tests.
SDK2_LOCKFILE = BENCH_DIR.parent / "tests" / "interop" / "py" / "requirements-v2.txt"
READY_MARKER = ".bench-ready"
#: Seconds one install step may take; ``$ACP2_BENCH_INSTALL_TIMEOUT`` overrides it.
INSTALL_TIMEOUT = 600.0


def folder_name(name: str) -> str:
    """Return the cache folder of the ``py-sdk``, ``py-sdk2`` or ``ts-sdk`` environment."""
    if name == "py-sdk":
        return SDK_VENV_NAME
    if name == "py-sdk2":
        return f"venv-acp100rc3-{file_hash(SDK2_LOCKFILE)}"
    return f"ts-{lockfile_hash()}"


def is_ready(name: str) -> bool:
    """Return whether the named environment (see :func:`folder_name`) is already installed."""
    return (cache_dir(create=False) / folder_name(name) / READY_MARKER).exists()


class Unavailable(Exception):
    """A baseline cannot run on this machine; the message says why."""


def cache_dir(create: bool = True) -> Path:
    """Return (and by default create) the folder that holds the baselines' environments."""
    root = os.environ.get("ACP2_BENCH_CACHE")
    path = Path(root) if root else Path.home() / ".cache" / "acp2" / "bench"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def _run(argv: list[str], cwd: Path | None = None) -> None:
    """Run an install step; raise :class:`Unavailable` with its last output line on failure."""
    timeout = float(os.environ.get("ACP2_BENCH_INSTALL_TIMEOUT", INSTALL_TIMEOUT))
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{Path(argv[0]).name} failed: {exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines()]
        lines = [line for line in lines if line and "complete log of this run" not in line]
        tail = lines[-1] if lines else f"exit code {done.returncode}"
        raise Unavailable(f"{Path(argv[0]).name} {' '.join(argv[1:3])} failed: {tail}")


def _build_into(final: Path, build: Callable[[Path], None]) -> Path:
    """Run ``build(tmp)`` in a fresh temporary folder, then rename it to ``final``."""
    if (final / READY_MARKER).exists():
        return final
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".tmp-", dir=final.parent))
    try:
        build(tmp)
        (tmp / READY_MARKER).write_text("ok\n")
        if final.exists():
            shutil.rmtree(final, ignore_errors=True)
        try:
            tmp.rename(final)
        except OSError:
            if not (final / READY_MARKER).exists():  # lost a race with another run
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def ensure_sdk_venv() -> Path:
    """Return the Python of a venv with ``agent-client-protocol==0.12.1`` and orjson."""

    def build(tmp: Path) -> None:
        _run([sys.executable, "-m", "venv", str(tmp)])
        pip = [str(tmp / "bin" / "python"), "-m", "pip", "install", "-q", "--retries", "2"]
        _run([*pip, "--timeout", "20", "--disable-pip-version-check", *SDK_REQUIREMENTS])

    venv = _build_into(cache_dir() / SDK_VENV_NAME, build)
    return venv / "bin" / "python"


def ensure_sdk2_venv() -> Path:
    """Return the Python of a venv holding the Python SDK 1.0.0rc3 from its lockfile.

    As the interop tests install it: every wheel hash-checked, no dependency resolution,
    and the project interpreter's pip installing into the new venv (which needs no pip).
    """
    if not SDK2_LOCKFILE.exists():
        raise Unavailable(f"{SDK2_LOCKFILE.name} not found")

    def build(tmp: Path) -> None:
        _run([sys.executable, "-m", "venv", "--without-pip", str(tmp)])
        pip = [sys.executable, "-m", "pip", "--python", str(tmp / "bin" / "python"), "install"]
        locked = ["--require-hashes", "--no-deps", "--only-binary", ":all:", "-q"]
        _run([*pip, *locked, "--disable-pip-version-check", "-r", str(SDK2_LOCKFILE)])

    venv = _build_into(cache_dir() / folder_name("py-sdk2"), build)
    return venv / "bin" / "python"


def file_hash(path: Path) -> str:
    """Return a short sha256 of a file's bytes (lockfiles name their install folders)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def lockfile_hash() -> str:
    """Return a short hash of ``bench/ts/package-lock.json`` (it names the install folder)."""
    return file_hash(TS_DIR / "package-lock.json")


def node_binary() -> str:
    """Return the path of ``node``, or raise :class:`Unavailable`."""
    node = shutil.which("node")
    if node is None:
        raise Unavailable("node is not installed")
    return node


def ensure_ts_peers() -> Path:
    """Return a folder holding the pinned TypeScript SDK and fresh copies of the peers.

    The peers (``bench/ts/*.mjs``) are copied next to ``node_modules`` on every call, so
    Node resolves the SDK from the cache folder while the sources stay in the project.
    """
    node_binary()
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed")

    def build(tmp: Path) -> None:
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(TS_DIR / name, tmp / name)
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=tmp)

    folder = _build_into(cache_dir() / f"ts-{lockfile_hash()}", build)
    for source in TS_DIR.glob("*.mjs"):
        shutil.copy2(source, folder / source.name)
    return folder
