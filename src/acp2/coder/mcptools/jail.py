"""``python -c ... jail [--read=P]... [--write=P]... [--network] -- CMD ARGS``

Starts ``CMD`` confined by Landlock (reads beneath the system directories, this
interpreter and each ``--read``; writes beneath each ``--write``, a private temporary
directory and the usual devices; no TCP unless ``--network``), waits for it, and removes
the private directory. A SIGTERM (the MCP SDK's stop) is passed on to ``CMD``. Used to
start stdio MCP servers when Landlock, not bubblewrap, is the sandbox.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from acp2.coder.tools import landlock
from acp2.coder.tools.confine import DEVICES, SYSTEM_DIRS

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Run the confined command; its exit status, or 2 (with a message) on bad usage or
    when it cannot be confined or started."""
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("usage: jail [--read=P] [--write=P] [--network] -- CMD ARGS", file=sys.stderr)
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    private = tempfile.mkdtemp(prefix="acp2-mcp-")
    try:
        return _run(options, command, private)
    except OSError as exc:
        print(f"the MCP server could not be confined or started: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _run(options: list[str], command: list[str], private: str) -> int:
    reads = [o.split("=", 1)[1] for o in options if o.startswith("--read=")]
    writes = [o.split("=", 1)[1] for o in options if o.startswith("--write=")]
    readable = [*SYSTEM_DIRS, sys.prefix, sys.base_prefix, *reads, "/proc", "/sys", "/dev"]
    ruleset = landlock.build_ruleset(
        readable, [*writes, private, *DEVICES], network="--network" in options
    )
    env = {**os.environ, "TMPDIR": private, "HOME": private}
    # Landlock binds a process and what it starts: applied in the child, between fork and
    # exec (before the child closes its other descriptors, the ruleset among them).
    restrict = functools.partial(landlock.restrict_self, ruleset)
    try:
        child = subprocess.Popen(command, env=env, preexec_fn=restrict)
    finally:
        os.close(ruleset)
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    return child.wait()
