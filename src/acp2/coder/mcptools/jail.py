"""``python -m acp2.coder.mcptools.jail [--read=P]... [--write=P]... [--network] -- CMD ARGS``

Confines itself with Landlock (reads beneath the system directories, this interpreter and
each ``--read``; writes beneath each ``--write``, a private temporary directory and the
usual devices; no TCP unless ``--network``), then replaces itself with ``CMD``. Used to
start stdio MCP servers when Landlock, not bubblewrap, is the sandbox.
"""

from __future__ import annotations

import os
import sys
import tempfile

from acp2.coder.tools import landlock
from acp2.coder.tools.confine import DEVICES, SYSTEM_DIRS

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Apply the ruleset and exec; return 2 (with a message) on bad usage or failure."""
    if "--" not in argv:
        print("usage: jail [--read=P] [--write=P] [--network] -- CMD ARGS", file=sys.stderr)
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    reads = [o.split("=", 1)[1] for o in options if o.startswith("--read=")]
    writes = [o.split("=", 1)[1] for o in options if o.startswith("--write=")]
    private = tempfile.mkdtemp(prefix="acp2-mcp-")
    prefixes = [sys.prefix, sys.base_prefix]
    readable = [*SYSTEM_DIRS, *prefixes, *reads, "/proc", "/sys", "/dev"]
    try:
        ruleset = landlock.build_ruleset(
            readable, [*writes, private, *DEVICES], network="--network" in options
        )
        landlock.restrict_self(ruleset)
        os.environ.update(TMPDIR=private, HOME=private)
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"the MCP server could not be confined or started: {exc}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
