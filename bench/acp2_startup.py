"""acp2 start-up: ``import acp2``, ``import acp2.client``, ``from acp2.client import
connect``, spawn ``acp2 test-agent`` -> init.

HOOK (coordinator): benchmark 5. ``import acp2`` is measured as soon as the package
exists; ``import acp2.client`` once ``acp2.client`` is a real module; the spawn time once
``acp2.cli.test_agent`` and ``acp2.transport.stdio`` exist. What cannot be measured yet is
listed under ``_skipped`` (shown as n/a with the reason).
"""

from __future__ import annotations

import sys

from _acp2 import acp2_command, missing, size_arguments
from _common import emit_result
from startup import import_ms, spawn_to_initialize_ms


def main() -> None:
    """Command line: ``--runs R`` fresh processes per measurement (median)."""
    args = size_arguments(__doc__).parse_args()
    metrics: dict[str, object] = {}
    skipped: dict[str, str] = {}
    metrics["import_ms"] = import_ms(sys.executable, "acp2", args.runs)
    reason = missing("acp2.client")
    if reason is None:
        metrics["import_client_ms"] = import_ms(sys.executable, "acp2.client", args.runs)
        # What a client program pays: acp2.client resolves its names lazily.
        connect = import_ms(sys.executable, "acp2.client:connect", args.runs)
        metrics["import_connect_ms"] = connect
    else:
        skipped["import_client_ms"] = reason
    reason = missing("acp2.cli.test_agent", "acp2.transport.stdio")
    if reason is None:
        argv = [acp2_command(), "test-agent"]
        metrics["spawn_init_ms"] = spawn_to_initialize_ms(argv, 2, args.runs)
    else:
        skipped["spawn_init_ms"] = reason
    if skipped:
        metrics["_skipped"] = skipped
    emit_result(metrics)


if __name__ == "__main__":
    main()
