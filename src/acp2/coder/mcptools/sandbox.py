"""Stdio MCP servers in the command sandbox (``docs/mcp.md``, ``docs/sandbox.md``).

:func:`sandbox_launcher` rewrites a stdio server's launch to run under the confinement
``run_command`` gets (:func:`~acp2.coder.tools.confine.choose`): inside ``bwrap`` with the
same mounts and namespaces, or under Landlock through :mod:`acp2.coder.mcptools.jail`.
Besides what a command may read, the server may read its own files: the directory of its
command and of every absolute path among its arguments (and the virtual environment
or ``node_modules`` holding it). Writes stay limited to the
session's roots; the network follows ``--command-network``. When the user required a
sandbox this machine lacks, the server does not start.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from acp2.agent.mcp import StdioLaunch
from acp2.agent.mcp.options import Launcher
from acp2.coder.tools.confine import CommandPolicy, bwrap_argv, choose
from acp2.errors import McpServerError

__all__ = ["sandbox_launcher", "server_paths"]


def sandbox_launcher(policy: CommandPolicy) -> Launcher:
    """A launcher that confines every stdio server as ``policy`` confines commands."""

    def launch(plain: StdioLaunch) -> StdioLaunch:
        confinement = choose(policy)
        if confinement.kind == "refused":
            raise McpServerError(f"not started: {confinement.reason}")
        if confinement.kind == "none":
            return plain
        own = server_paths(plain)
        widened = replace(policy, read_only=(*policy.read_only, *own))
        if confinement.kind == "bubblewrap":
            home = os.environ.get("HOME", "")
            argv = bwrap_argv(widened, cwd=plain.cwd, roots=plain.roots, home=home)
            # The paths as written too (bwrap_argv binds real paths): a command reached
            # through a symlinked directory, such as a venv's python, keeps working.
            at = argv.index("--remount-ro")
            argv[at:at] = [arg for path in own for arg in ("--ro-bind", path, path)]
            return replace(
                plain, command=argv[0], args=(*argv[1:], "--", plain.command, *plain.args)
            )
        return _landlock(widened, plain)

    return launch


def server_paths(launch: StdioLaunch) -> list[str]:
    """Where the server's own files are: the directory of its command and of each
    absolute-path argument, and the tree that directory belongs to (a virtual
    environment, or the ``node_modules`` holding an npm package), both as written and as
    real paths."""
    found: list[str] = []
    for path in (launch.command, *launch.args):
        if not os.path.isabs(path) or not os.path.exists(path):
            continue
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        for where in (folder, *_package_tree(folder)):
            for shown in (os.path.normpath(where), os.path.realpath(where)):
                if shown != "/" and shown not in found:
                    found.append(shown)
    return found


def _package_tree(folder: str) -> list[str]:
    """The tree ``folder`` belongs to: a venv (``pyvenv.cfg`` one level up) or the
    outermost ``node_modules`` holding it, whose other packages it imports."""
    parent = os.path.dirname(folder)
    if os.path.exists(os.path.join(parent, "pyvenv.cfg")):
        return [parent]
    marker = f"{os.sep}node_modules{os.sep}"
    found = []
    for path in (folder + os.sep, os.path.realpath(folder) + os.sep):
        if marker in path:
            found.append(path[: path.index(marker) + len(marker) - 1])
    return found


def _landlock(policy: CommandPolicy, plain: StdioLaunch) -> StdioLaunch:
    """Run the server under the jail module, which starts it confined by Landlock."""
    spec = [f"--read={p}" for p in policy.read_only] + [f"--write={r}" for r in plain.roots]
    if policy.network:
        spec.append("--network")
    # The jail imports acp2 from where this process does, without a PYTHONPATH that the
    # server it execs would inherit.
    paths = [p for p in sys.path if p]
    code = (
        f"import sys; sys.path[:0] = {paths!r}; "
        "from acp2.coder.mcptools.jail import main; sys.exit(main(sys.argv[1:]))"
    )
    args = ("-c", code, *spec, "--", plain.command, *plain.args)
    return replace(plain, command=sys.executable, args=args)
