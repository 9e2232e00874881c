"""The order the suite runs in under pytest-xdist: the slow files first, spread evenly.

``--dist worksteal`` (scripts/test.sh) hands each of the W workers a contiguous block of
the collected tests, about N/W each, and lets an idle worker steal the second half of a
busy worker's queue. In file order the slow tests (subprocess peers, whole ``acp2 check``
runs, 60 MiB payloads) bunch up in a few blocks, so one worker started a minute-long test
when the others were nearly done. :func:`deal` reorders the tests so that block ``k``
starts with its share of the slow files and is filled up with fast tests: every worker
begins with slow work, and what is left to steal at the end is fast.

A slow file stays whole in one block: several of them share one module-scoped peer or
check run, which each worker running a part of the file would start again.

:data:`FILE_SECONDS` is a hint, not a contract: a missing or stale number only makes the
blocks less even, never changes which tests run or what they check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["FILE_SECONDS", "block_sizes", "deal"]

T = TypeVar("T")

#: Seconds the tests of each file (relative to tests/) took together, measured in one
#: ``-n 4`` run on 2 shared cores (``--durations``); every file of 8 s or more. (b): the
#: files whose Python SDK peers now start warm (helpers/warm.py), re-measured in one
#: ``-n 2`` run of tests/interop on a nearly idle machine and multiplied by 1.5 (the
#: unchanged files of that run took about 1.5x as long in the -n 4 run); the pairs, the
#: two checks of the v1 agent and test_bridge_pass_through.py fell below the bar.
FILE_SECONDS: dict[str, float] = {
    "interop/test_acp2_agent_vs_py_client.py": 56,  # (b)
    "check/test_reference_agents.py": 99,
    "bench/test_harness.py": 93,  # 186 s in one -n 2 run under a load of 7, halved
    "interop/test_acp2_agent_vs_ts_client.py": 71,
    "interop/test_acp2_check_vs_py_agent.py": 10,  # (b)
    "interop/test_ts_pair.py": 40,  # (b) estimate: its long stream is 70% shorter
    "interop/test_acp2_client_vs_py_agent.py": 15,  # (b)
    "cli/test_cli_errors.py": 48,
    "test_real_agents_tier.py": 36,
    "hostile/test_store_two_processes.py": 50,  # x2 since both store backends (estimate)
    "hostile/test_flooding_agent.py": 33,
    "interop/test_acp2_check_vs_ts_agent.py": 33,
    "client/test_cli_run.py": 32,
    "cli/test_cli_chat_pty.py": 31,
    "hostile/test_large_prompt.py": 31,
    "interop/test_py_v1_client_vs_acp2_agent.py": 8,  # (b)
    "cli/test_bridge_cmd.py": 29,
    "check/test_coder_agent.py": 28,
    "rpc/test_fuzz.py": 28,
    "cli/test_cli_chat_commands.py": 26,
    "interop/test_acp2_client_vs_py_v1_agent.py": 9,  # (b)
    "cli/test_cli_chat_transcript.py": 22,
    "interop/test_acp2_client_vs_ts_agent.py": 22,
    "hostile/test_command_orphans.py": 21,
    "client/test_prompt_retry.py": 20,  # x2 since both store backends (estimate)
    "cli/test_cli_chat_input.py": 19,
    "interop/test_bridge_py_v1_client_vs_ts_agent.py": 18,  # (b)
    "hostile/test_permission_spoofing.py": 18,
    "hostile/test_terminal_injection.py": 18,
    "check/test_timing.py": 16,
    "interop/test_bridge_ts_client_vs_py_v1_agent.py": 20,  # (b)
    "hostile/test_replay_huge_message.py": 12,
    "hostile/test_command_env_leak.py": 12,
    "cli/test_cli_demo.py": 12,
    "check/test_v1_agents.py": 11,
    "e2e/test_e2e_lifecycle.py": 11,
    "hostile/test_sandbox_symlink_race.py": 10,
    "test_requirement_catalog.py": 9,
    "hostile/test_command_confinement.py": 9,
    "check/test_driver.py": 8,
    "hostile/test_prompt_without_user_message.py": 8,
    # Added with the remote work (estimates from single-file runs at load 8-12; refresh
    # from a --durations run).
    "interop/test_ts_remote_clients_vs_acp2_serve.py": 130,
    "interop/test_acp2_remote_client_vs_ts_server.py": 50,
    "serve/test_scale_out.py": 80,
    "serve/test_serve_takeover_http.py": 8,
    "serve/test_serve_takeover_streams.py": 8,
    "transport/test_remote_vs_serve.py": 80,
    "transport/test_remote_faults.py": 25,
    "cli/test_cli_chat_elicitation.py": 30,
    "cli/test_cli_chat_login.py": 25,
    "check/test_check_remote.py": 20,
    "e2e/test_e2e_subagents.py": 12,
    "e2e/test_e2e_subagents_processes.py": 25,
    "cli/test_cli_chat_subagents.py": 18,
}


def block_sizes(total: int, workers: int) -> list[int]:
    """The sizes of the first blocks ``worksteal`` sends: each worker in turn gets an
    equal share (rounded down) of the tests not sent yet. They add up to ``total``."""
    sizes: list[int] = []
    left = total
    for remaining in range(workers, 0, -1):
        sizes.append(left // remaining)
        left -= sizes[-1]
    return sizes


def deal(
    items: Sequence[T], workers: int, file_of: Callable[[T], str], seconds: dict[str, float]
) -> list[T]:
    """``items`` reordered for ``workers`` xdist workers (see the module docstring).

    Every item appears exactly once; items of one file keep their order and stay
    together; files not in ``seconds`` keep their order among themselves. With fewer
    than two workers, ``items`` come back in their own order.
    """
    if workers < 2:
        return list(items)
    files: dict[str, list[T]] = {}
    rest: list[T] = []
    for item in items:
        name = file_of(item)
        (files.setdefault(name, []) if name in seconds else rest).append(item)
    bins = _pack(files, workers, seconds)
    ordered: list[T] = []
    for size, slow in zip(block_sizes(len(items), workers), bins, strict=True):
        fill = max(0, size - len(slow))
        ordered += slow + rest[:fill]
        del rest[:fill]
    return ordered + rest


def _pack(files: dict[str, list[T]], workers: int, seconds: dict[str, float]) -> list[list[T]]:
    # Longest first into the least loaded bin: within one slow file of even.
    bins: list[list[T]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for name in sorted(files, key=lambda n: (-seconds[n], n)):
        k = loads.index(min(loads))
        bins[k] += files[name]
        loads[k] += seconds[name]
    return bins
