"""Install the pinned reference MCP servers (npm) for the MCP tests, once per lockfile.

``ensure_installed()`` runs ``npm ci`` on ``npm/package-lock.json`` into
``<cache root>/mcp-<sha256 of the lockfile>`` (the interop tests' cache root, see
``tests/interop/node_env.py``, whose tool checks and lock it reuses) and returns that
folder. A finished install is reused; a changed lockfile gets a new folder; concurrent
installs are serialised by a lock file and finish with one atomic rename.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from interop import node_env

NPM_DIR = Path(__file__).resolve().parent / "npm"
LOCKFILE = NPM_DIR / "package-lock.json"
PACKAGES = ("@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem")
NodeUnavailable = node_env.NodeUnavailable


def install_dir() -> Path:
    """Where the servers for the current lockfile live (or will live)."""
    digest = hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()
    return node_env.cache_root() / f"mcp-{digest}"


def is_installed(folder: Path) -> bool:
    """True if ``folder`` holds a finished install."""
    modules = folder / "node_modules"
    return (folder / node_env.STAMP).is_file() and all(
        (modules / name / "package.json").is_file() for name in PACKAGES
    )


def ensure_installed() -> Path:
    """The install folder, installed first if needed; raises ``NodeUnavailable``."""
    node_env.check_tools()
    target = install_dir()
    if is_installed(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with node_env.exclusive_lock(target.parent / f"{target.name}.lock"):
        if not is_installed(target):
            _install(target)
    return target


def _install(target: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:16]}-", dir=target.parent))
    staging.chmod(0o755)
    try:
        for name in node_env.INSTALL_FILES:
            if (NPM_DIR / name).exists():
                shutil.copy2(NPM_DIR / name, staging / name)
        node_env._npm_ci(staging)
        (staging / node_env.STAMP).write_text(LOCKFILE.name + "\n")
        if target.exists() and not is_installed(target):
            shutil.rmtree(target)
        try:
            os.rename(staging, target)
        except OSError:
            if not is_installed(target):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
