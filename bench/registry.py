"""Benchmark of the ACP registry part (acp2.registry): decoding an index the size of the
real one (about 40 agents) and the largest acp2 accepts (2000), searching it, the
start-up cost of ``acp2 agents`` against a warm cache, and unpacking an agent archive.

Run: ``.venv/bin/python bench/registry.py``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp2.registry.archive import unpack
from acp2.registry.model import decode_index
from acp2.registry.search import search


def entry(i: int) -> dict[str, Any]:
    """An entry shaped like the registry's: six binary platforms, or an npx package."""
    targets = {
        f"{system}-{machine}": {
            "archive": f"https://example.invalid/{i}/{system}.tar.gz",
            "cmd": "./a",
        }
        for system in ("darwin", "linux", "windows")
        for machine in ("aarch64", "x86_64")
    }
    dist = {"binary": targets} if i % 2 else {"npx": {"package": f"@s/agent-{i}@1.0.{i}"}}
    return {
        "id": f"agent-{i}",
        "name": f"Agent {i}",
        "version": f"1.0.{i}",
        "description": f"Coding agent number {i}, for tests of speed",
        "repository": f"https://example.invalid/agent-{i}",
        "authors": ["someone"],
        "license": "MIT",
        "distribution": dist,
    }


def index_bytes(count: int) -> bytes:
    """A ``registry.json`` of ``count`` entries."""
    agents = [entry(i) for i in range(count)]
    return json.dumps({"version": "1.0.0", "agents": agents, "extensions": []}).encode()


def best_ms(function: Callable[[], object], repeat: int = 20) -> float:
    """Best of ``repeat`` calls, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def peak_kib(function: Callable[[], object]) -> float:
    """Peak Python heap of one call, in KiB."""
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


def cli_ms(cache: Path, url: str) -> float:
    """Wall time of ``acp2 agents`` answering from a fresh cache (median of 5)."""
    env = dict(os.environ, ACP2_CACHE_DIR=str(cache), ACP2_REGISTRY_URL=url)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "acp2", "agents", "--offline"],
            env=env,
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - started)
    return sorted(times)[2] * 1000


def archive_bytes(files: int, size: int) -> bytes:
    """A .tar.gz of ``files`` files of ``size`` bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for i in range(files):
            info = tarfile.TarInfo(f"lib/file-{i}")
            info.size = size
            tf.addfile(info, io.BytesIO(b"x" * size))
    return buffer.getvalue()


def unpack_ms(data: bytes) -> float:
    """Milliseconds to unpack ``data`` into a fresh folder."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "a.tar.gz"
        archive.write_bytes(data)
        dest = Path(tmp) / "out"
        dest.mkdir()
        started = time.perf_counter()
        unpack(archive, dest)
        return (time.perf_counter() - started) * 1000


def main() -> None:
    """Print the table."""
    print("| index | bytes | decode ms | peak heap KiB | search ms |")
    print("| --- | --- | --- | --- | --- |")
    for count in (40, 2000):
        data = index_bytes(count)
        agents = decode_index(data).agents
        decode = best_ms(lambda data=data: decode_index(data))
        heap = peak_kib(lambda data=data: decode_index(data))
        found = best_ms(lambda agents=agents: search(agents, "coding 7"))
        print(f"| {count} agents | {len(data)} | {decode:.2f} | {heap:.0f} | {found:.3f} |")
    with tempfile.TemporaryDirectory() as tmp:
        from acp2.registry.index import _cache_name

        url = "https://example.invalid/registry.json"
        folder = Path(tmp) / "registry"
        folder.mkdir(mode=0o700)
        (folder / _cache_name(url)).write_bytes(index_bytes(40))
        print(f"\n`acp2 agents --offline` (40 agents, cached): {cli_ms(Path(tmp), url):.0f} ms")
    data = archive_bytes(200, 256 * 1024)
    print(f"unpacking 200 files of 256 KiB (50 MiB): {unpack_ms(data):.0f} ms")


if __name__ == "__main__":
    main()
