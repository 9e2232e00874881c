"""Install the pinned real agents of the slow tier, once per lockfile.

- :func:`gemini_cli` runs ``npm ci`` on ``npm/package-lock.json`` (``@google/gemini-cli``
  0.61.0) into ``<cache root>/agents-npm-<sha256 of the lockfile>`` and returns the
  ``bundle/gemini.js`` to run with ``node``.
- :func:`v2_adapters` runs ``npm ci`` on ``npm-v2/package-lock.json`` (the ACP v2
  adapters ``@agentclientprotocol/codex-acp`` 2.6.0 and ``claude-agent-acp`` 0.101.0, with
  the vendor CLIs they drive) into ``<cache root>/agents-npm-v2-<sha256>`` and returns
  that folder.
- :func:`claude_v1_agent` runs ``npm ci`` on ``npm-claude-v1/package-lock.json``
  (``@zed-industries/claude-agent-acp`` 0.23.1, the last ACP v1 Claude Code adapter, with
  the Claude Code it drives) into ``<cache root>/agents-npm-claude-v1-<sha256>`` and
  returns its ``dist/index.js``.
- :func:`fast_agent` makes a venv from ``py/requirements-fast-agent.txt``
  (``fast-agent-mcp`` 0.10.48 and its dependencies, hash-locked) in
  ``<cache root>/agents-py-<sha256>-cp<XY>`` and returns the argv that runs the
  ``fast-agent`` command there (``python -m fast_agent.cli``: the venv's scripts carry
  the staging folder in their ``#!`` line, its ``bin/python`` keeps working).
  fast-agent needs CPython 3.12 (the lockfile's wheels are cp312), which need not be the
  interpreter running the tests: :func:`find_python` looks for one.

The cache root is the interop tests' (``$ACP2_INTEROP_CACHE``, else
``~/.cache/acp2/interop``); installs are race-safe the same way (a lock file, a private
staging folder, a stamp, one atomic rename). Failures raise :class:`AgentUnavailable`
with the tool's output.
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

from interop.node_env import MIN_NODE_MAJOR, cache_root, exclusive_lock, node_version

__all__ = [
    "FAST_AGENT_LOCK",
    "FAST_AGENT_PYTHON",
    "NPM_LOCK",
    "AgentUnavailable",
    "claude_v1_agent",
    "fast_agent",
    "find_python",
    "gemini_cli",
    "v2_adapters",
]

HERE = Path(__file__).resolve().parent
NPM_DIR = HERE / "npm"
NPM_LOCK = NPM_DIR / "package-lock.json"
NPM_FILES = ("package.json", "package-lock.json", ".npmrc")
NPM_V2_DIR = HERE / "npm-v2"
NPM_CLAUDE_V1_DIR = HERE / "npm-claude-v1"
FAST_AGENT_LOCK = HERE / "py" / "requirements-fast-agent.txt"
#: The CPython the fast-agent lockfile's compiled wheels are for.
FAST_AGENT_PYTHON = (3, 12)
#: Names an interpreter for fast-agent explicitly (skips the search).
PYTHON_ENV = "ACP2_FAST_AGENT_PYTHON"
STAMP = ".acp2-installed"
INSTALL_TIMEOUT = 900.0


class AgentUnavailable(Exception):
    """An agent could not be installed here; ``str()`` says why."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(argv: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        raise AgentUnavailable(f"`{what}` timed out after {INSTALL_TIMEOUT:.0f}s") from exc
    except OSError as exc:
        raise AgentUnavailable(f"`{what}` could not start: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        raise AgentUnavailable(f"`{what}` failed ({done.returncode}):\n" + "\n".join(tail))


def _installed(folder: Path, product: Path) -> bool:
    return (folder / STAMP).is_file() and product.exists()


def _ensure(target: Path, product: Callable[[Path], Path], build: Callable[[Path], None]) -> Path:
    """``product(target)`` once ``build`` has filled ``target`` (built in a staging
    folder, stamped, renamed into place; serialised by a lock file)."""
    if _installed(target, product(target)):
        return product(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.parent / f"{target.name}.lock"):
        if not _installed(target, product(target)):
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:20]}-", dir=target.parent))
            try:
                staging.chmod(0o755)
                build(staging)
                (staging / STAMP).write_text(target.name + "\n")
                if target.exists():
                    shutil.rmtree(target)  # a broken leftover of a killed run
                staging.rename(target)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return product(target)


# -- Gemini CLI (npm) ----------------------------------------------------------------------


def gemini_cli() -> Path:
    """The installed ``gemini.js`` (run it with ``node``); raises ``AgentUnavailable``
    without a ``node`` >= 20 and ``npm``, or when ``npm ci`` fails."""
    version = node_version_or_none()
    if version is None or version[0] < MIN_NODE_MAJOR or shutil.which("npm") is None:
        raise AgentUnavailable(f"Gemini CLI needs Node.js >= {MIN_NODE_MAJOR} and npm")
    target = cache_root() / f"agents-npm-{_digest(NPM_LOCK)}"
    return _ensure(target, _gemini_js, _npm_ci)


def v2_adapters() -> Path:
    """The folder holding the installed v2 adapters' ``node_modules``; raises
    ``AgentUnavailable`` as :func:`gemini_cli` does."""
    version = node_version_or_none()
    if version is None or version[0] < MIN_NODE_MAJOR or shutil.which("npm") is None:
        raise AgentUnavailable(f"the v2 adapters need Node.js >= {MIN_NODE_MAJOR} and npm")
    target = cache_root() / f"agents-npm-v2-{_digest(NPM_V2_DIR / 'package-lock.json')}"
    return _ensure(target, lambda folder: folder, lambda folder: _npm_ci(folder, NPM_V2_DIR))


def claude_v1_agent() -> Path:
    """The installed claude-agent-acp 0.23.1 ``dist/index.js`` (run it with ``node``);
    raises ``AgentUnavailable`` as :func:`gemini_cli` does."""
    version = node_version_or_none()
    if version is None or version[0] < MIN_NODE_MAJOR or shutil.which("npm") is None:
        raise AgentUnavailable(f"claude-agent-acp needs Node.js >= {MIN_NODE_MAJOR} and npm")
    lock = NPM_CLAUDE_V1_DIR / "package-lock.json"
    target = cache_root() / f"agents-npm-claude-v1-{_digest(lock)}"
    js = "node_modules/@zed-industries/claude-agent-acp/dist/index.js"
    return _ensure(
        target, lambda folder: folder / js, lambda folder: _npm_ci(folder, NPM_CLAUDE_V1_DIR)
    )


def node_version_or_none() -> tuple[int, ...] | None:
    """The version of ``node`` on PATH, or None when there is no working one."""
    try:
        return node_version()
    except Exception:
        return None


def _gemini_js(folder: Path) -> Path:
    return folder / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"


def _npm_ci(folder: Path, source: Path = NPM_DIR) -> None:
    for name in NPM_FILES:
        shutil.copy2(source / name, folder / name)
    npm = shutil.which("npm") or "npm"
    argv = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    _run(argv, "npm ci", cwd=folder)


# -- fast-agent (PyPI) ---------------------------------------------------------------------


def find_python() -> Path:
    """A CPython ``FAST_AGENT_PYTHON`` interpreter: ``$ACP2_FAST_AGENT_PYTHON``, else
    ``python3.12`` on PATH, else pyenv's (``$PYENV_ROOT`` or ``~/.pyenv``); raises
    ``AgentUnavailable`` when there is none."""
    configured = os.environ.get(PYTHON_ENV)
    candidates = [configured] if configured else _python_candidates()
    for candidate in candidates:
        if candidate and _is_wanted_python(candidate):
            return Path(candidate)
    major, minor = FAST_AGENT_PYTHON
    raise AgentUnavailable(
        f"fast-agent 0.10.48 needs CPython {major}.{minor} (this lockfile's wheels); "
        f"none found (set {PYTHON_ENV})"
    )


def _python_candidates() -> list[str]:
    major, minor = FAST_AGENT_PYTHON
    found = [shutil.which(f"python{major}.{minor}") or ""]
    if sys.version_info[:2] == FAST_AGENT_PYTHON:
        found.insert(0, sys.executable)
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if root.is_dir():
        versions = sorted(root.glob(f"{major}.{minor}.*"), reverse=True)
        found += [str(version / "bin" / "python3") for version in versions]
    return found


def _is_wanted_python(path: str) -> bool:
    probe = "import sys; print(sys.implementation.name, *sys.version_info[:2])"
    try:
        out = subprocess.run(
            [path, "-c", probe], capture_output=True, text=True, timeout=60, check=True
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return False
    return out == ["cpython", *map(str, FAST_AGENT_PYTHON)]


def fast_agent() -> list[str]:
    """The argv of the installed ``fast-agent`` command; raises ``AgentUnavailable`` when no fitting
    Python is found or pip cannot install the lockfile (no network, hash mismatch)."""
    python = find_python()
    major, minor = FAST_AGENT_PYTHON
    target = cache_root() / f"agents-py-{_digest(FAST_AGENT_LOCK)}-cp{major}{minor}"
    python_in = _ensure(target, lambda folder: folder / "bin" / "python", _venv(python))
    return [str(python_in), "-m", "fast_agent.cli"]


def _venv(python: Path) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        _run([str(python), "-m", "venv", "--without-pip", str(folder)], "venv")
        # The tests' own pip installs into the new venv (``--python``), so it needs none.
        pip = [sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python")]
        _run(
            [
                *(*pip, "install", "--require-hashes", "--no-deps", "--only-binary", ":all:"),
                *("--disable-pip-version-check", "--no-input", "-q", "-r", str(FAST_AGENT_LOCK)),
            ],
            "pip install fast-agent",
        )

    return build
