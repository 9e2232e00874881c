"""Install the pinned official Python SDKs for the interop tests, once per lockfile.

``ensure_installed(lock)`` creates a virtual environment for one of ``LOCKFILES``
(``"v1"``: ``agent-client-protocol==0.12.1``; ``"v2"``: ``==1.0.0rc3``, whose
``acp.experimental.v2`` speaks ACP v2) and returns its ``python``. The venv lives under
the cache root ``node_env`` uses (``$ACP2_INTEROP_CACHE``, else ``~/.cache/acp2/interop``)
as ``py-<sha256 of the lockfile>-cp<major><minor>``: the interpreter is part of the name
because the lockfile's compiled wheels (``pydantic-core``) and the venv itself belong
to one Python version.

pip installs with ``--require-hashes --no-deps --only-binary :all:``: every file must be
a wheel the lockfile names with its hash, and nothing outside the lockfile is resolved.
Installs are race-safe as in ``node_env``: serialised by a lock file, built in a private
folder, stamped, then moved into place with one ``rename`` (only ``bin/python`` of the
venv is used, which keeps working after the move).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .node_env import cache_root, exclusive_lock

PY_DIR = Path(__file__).resolve().parent / "py"
LOCKFILES = {"v1": PY_DIR / "requirements-v1.txt", "v2": PY_DIR / "requirements-v2.txt"}
VERSIONS = {"v1": "0.12.1", "v2": "1.0.0rc3"}  # the SDK version each lockfile pins
STAMP = ".acp2-installed"
PIP_TIMEOUT = 600.0


class PythonSdkUnavailable(Exception):
    """The venv could not be created or pip could not install the lockfile; ``str()`` says why."""


def lockfile_digest(lock: str) -> str:
    """The sha256 of lockfile ``lock`` ("v1" or "v2")."""
    return hashlib.sha256(LOCKFILES[lock].read_bytes()).hexdigest()


def install_dir(lock: str) -> Path:
    """Where the venv for ``lock`` and the running interpreter lives (or will live)."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return cache_root() / f"py-{lockfile_digest(lock)}-{tag}"


def venv_python(folder: Path) -> Path:
    """The interpreter of the venv in ``folder``."""
    return folder / "bin" / "python"


def is_installed(folder: Path) -> bool:
    """True if ``folder`` holds a finished install whose interpreter still exists."""
    # exists() follows the symlink: a venv whose base interpreter is gone is not installed.
    return (folder / STAMP).is_file() and venv_python(folder).exists()


def ensure_installed(lock: str) -> Path:
    """Return the venv ``python`` for lockfile ``lock``, installing it if needed.

    Raises ``PythonSdkUnavailable`` when the venv or the pip install fails (no network,
    no wheel for this interpreter, a hash mismatch); the message carries pip's output.
    """
    target = install_dir(lock)
    if not is_installed(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(target.parent / f"{target.name}.lock"):
            if not is_installed(target):
                _install(lock, target)
    return venv_python(target)


def _install(lock: str, target: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:15]}-", dir=target.parent))
    staging.chmod(0o755)
    try:
        _run([sys.executable, "-m", "venv", "--without-pip", str(staging)], "venv")
        _run(_pip_argv(venv_python(staging), LOCKFILES[lock]), "pip install")
        (staging / STAMP).write_text(lockfile_digest(lock) + "\n")
        if target.exists() and not is_installed(target):
            shutil.rmtree(target)  # a broken leftover from an older, killed run
        try:
            staging.rename(target)
        except OSError:
            if not is_installed(target):  # lost a race against another installer
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pip_argv(python: Path, lockfile: Path) -> list[str]:
    # The running interpreter's pip installs into the new venv (``--python``), so the
    # venv needs no pip of its own.
    return [
        *(sys.executable, "-m", "pip", "--python", str(python), "install"),
        *("--require-hashes", "--no-deps", "--only-binary", ":all:"),
        *("--disable-pip-version-check", "--no-input", "-q", "-r", str(lockfile)),
    ]


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise PythonSdkUnavailable(f"`{what}` timed out after {PIP_TIMEOUT:.0f}s") from exc
    except OSError as exc:
        raise PythonSdkUnavailable(f"`{what}` could not start: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        raise PythonSdkUnavailable(
            f"`{what}` failed with exit code {done.returncode}:\n" + "\n".join(tail)
        )
