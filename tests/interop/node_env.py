"""Install the pinned TypeScript SDK for the interop tests, once per lockfile.

``ensure_installed()`` runs ``npm ci`` on ``tests/interop/ts/package-lock.json`` into
``<cache root>/<sha256 of the lockfile>`` and returns that folder (the parent of its
``node_modules``). The cache root is ``$ACP2_INTEROP_CACHE`` when set, else
``~/.cache/acp2/interop``. A finished install is reused as is; a changed lockfile gets
a new folder.

Concurrent pytest processes are safe: installs are serialised with an exclusive lock
file (``fcntl.flock`` where available), each install is built in a private temporary
folder and moved into place with one atomic ``rename``, and a folder counts as
installed only once it holds the ``.acp2-installed`` stamp written before the rename.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from helpers import timeouts

TS_DIR = Path(__file__).resolve().parent / "ts"
LOCKFILE = TS_DIR / "package-lock.json"
INSTALL_FILES = ("package.json", "package-lock.json", ".npmrc")
STAMP = ".acp2-installed"
SDK_PACKAGE = "@agentclientprotocol/sdk"
MIN_NODE_MAJOR = 20
NPM_TIMEOUT = 600.0


class NodeUnavailable(Exception):
    """Node or npm is missing, too old, or the install failed; ``str()`` says why."""


def lockfile_digest() -> str:
    """The sha256 of the lockfile, which names the install folder."""
    return hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()


def cache_root() -> Path:
    """``$ACP2_INTEROP_CACHE`` if set, else ``~/.cache/acp2/interop``."""
    configured = os.environ.get("ACP2_INTEROP_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "acp2" / "interop"


def install_dir() -> Path:
    """Where the node_modules for the current lockfile lives (or will live)."""
    return cache_root() / lockfile_digest()


def node_version() -> tuple[int, ...]:
    """The version of ``node`` on PATH; raises ``NodeUnavailable`` if there is none."""
    node = shutil.which("node")
    if node is None:
        raise NodeUnavailable("`node` is not on PATH (Node.js >= 20 is needed)")
    try:
        out = subprocess.run(
            [node, "--version"],
            capture_output=True,
            text=True,
            timeout=timeouts.SCENARIO_TIMEOUT,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise NodeUnavailable(f"`node --version` failed: {exc}") from exc
    return tuple(int(part) for part in out.strip().lstrip("v").split(".") if part.isdigit())


def check_tools() -> None:
    """Raise ``NodeUnavailable`` unless a new enough ``node`` and ``npm`` are on PATH."""
    version = node_version()
    if not version or version[0] < MIN_NODE_MAJOR:
        found = ".".join(map(str, version)) or "unknown"
        raise NodeUnavailable(f"Node.js >= {MIN_NODE_MAJOR} is needed, found {found}")
    if shutil.which("npm") is None:
        raise NodeUnavailable("`npm` is not on PATH")


def is_installed(folder: Path) -> bool:
    """True if ``folder`` holds a finished install."""
    return (folder / STAMP).is_file() and (
        folder / "node_modules" / SDK_PACKAGE / "package.json"
    ).is_file()


def ensure_installed() -> Path:
    """Return the install folder for the current lockfile, installing it if needed.

    Raises ``NodeUnavailable`` when node/npm is missing or ``npm ci`` fails.
    """
    check_tools()
    target = install_dir()
    if is_installed(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.parent / f"{target.name}.lock"):
        if not is_installed(target):
            _install(target)
    return target


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (no-op where ``fcntl`` is unavailable:
    the atomic rename of the installers still keeps concurrent installs safe).
    Shared with ``py_env``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _install(target: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:12]}-", dir=target.parent))
    staging.chmod(0o755)
    try:
        for name in INSTALL_FILES:
            if (TS_DIR / name).exists():
                shutil.copy2(TS_DIR / name, staging / name)
        _npm_ci(staging)
        (staging / STAMP).write_text(lockfile_digest() + "\n")
        if target.exists() and not is_installed(target):
            shutil.rmtree(target)  # a broken leftover from an older, killed run
        try:
            os.rename(staging, target)
        except OSError:
            if not is_installed(target):  # lost a race against another installer
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _npm_ci(folder: Path) -> None:
    npm = shutil.which("npm")
    assert npm is not None
    argv = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=NPM_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise NodeUnavailable(f"`npm ci` timed out after {NPM_TIMEOUT:.0f}s") from exc
    except OSError as exc:
        raise NodeUnavailable(f"`npm ci` could not start: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        raise NodeUnavailable(
            f"`npm ci` failed with exit code {done.returncode}:\n" + "\n".join(tail)
        )
