"""Benchmark of the terminal sanitizer (acp2.sanitize): MB/s per function on clean and
on hostile text, and its share of drawing one agent message.

Run: ``.venv/bin/python bench/sanitize.py [--mb 4]``.
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable

from rich.console import Console
from rich.markdown import Markdown

from acp2 import sanitize

CLEAN = "The quick brown fox jumps over the lazy dog; `code` and **bold** text.\n"
HOSTILE = (
    "text \x1b]0;title\x07 \x1b[31mred\x1b[0m \x9b2J \u202eabc\x1b]8;;u\x1b\\l\x1b]8;;\x1b\\\n"
)


def mb_per_s(function: Callable[[str], str], text: str, repeat: int = 5) -> float:
    """Best of ``repeat`` runs of ``function(text)``, in MB (10^6 characters) per second."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function(text)
        best = min(best, time.perf_counter() - started)
    return len(text) / best / 1e6


def draw_ms(text: str, clean: bool) -> float:
    """Milliseconds to draw ``text`` as markdown on an 80-column console (sanitized first
    when ``clean``)."""
    console = Console(file=io.StringIO(), width=80, force_terminal=True)
    started = time.perf_counter()
    console.print(Markdown(sanitize.prose(text) if clean else text, hyperlinks=False))
    return (time.perf_counter() - started) * 1000


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=4.0, help="text size in MB")
    size = int(parser.parse_args().mb * 1e6)
    cases = {
        "prose": sanitize.prose,
        "exact": sanitize.exact,
        "line": sanitize.line,
        "terminal": sanitize.terminal,
        "terminal (colours)": lambda t: sanitize.terminal(t, colors=True),
    }
    print(f"| function | clean MB/s | hostile MB/s |  ({size / 1e6:g} MB of text)")
    print("| --- | --- | --- |")
    for name, function in cases.items():
        clean = mb_per_s(function, (CLEAN * (size // len(CLEAN) + 1))[:size])
        hostile = mb_per_s(function, (HOSTILE * (size // len(HOSTILE) + 1))[:size])
        print(f"| {name} | {clean:.0f} | {hostile:.1f} |")
    message = CLEAN * (20_000 // len(CLEAN))
    plain, cleaned = draw_ms(message, False), draw_ms(message, True)
    print(f"\ndrawing a 20 kB message: {plain:.1f} ms raw, {cleaned:.1f} ms sanitized")


if __name__ == "__main__":
    main()
