"""The live region of a turn: what is still changing, and a status line below it.

:class:`LiveRegion` is a renderable built from the state each time it is drawn; the loop
draws it at a steady frame rate (:data:`FPS`), never per update. It always fits the
terminal: the body keeps its last lines (:class:`TailCrop`), the status line stays.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

import anyio
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.text import Text

from acp2.state import SessionState
from acp2.ui.blocks import View, entry_block
from acp2.ui.settle import Settler
from acp2.ui.style import elapsed_text, foreground_text, usage_text

__all__ = ["FPS", "LiveRegion", "PausableLive", "TailCrop", "status_line"]

#: Frames per second of the live region.
FPS: Final = 12.0
_SPINNER: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class TailCrop:
    """Render ``renderable`` and keep only its last ``height`` lines (``…`` on top when
    lines were dropped), so a long streaming message never overflows the screen."""

    def __init__(self, renderable: RenderableType, height: int) -> None:
        self.renderable = renderable
        self.height = max(1, height)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options.update(height=None), pad=False)
        if len(lines) > self.height:
            lines = [[Segment("…", console.get_style("dim"))], *lines[-(self.height - 1) :]]
        for line in lines:
            yield from line
            yield Segment.line()


def status_line(
    state: SessionState, *, phase: str | None, elapsed: float, hint: str | None = None
) -> Text:
    """``⠹ running · 4.2s · ctx 1.3k/128k (1%) · ctrl-c to cancel``.

    ``phase`` overrides the foreground state in words (``sending…``, ``cancelling…``).
    """
    waiting = state.foreground == "requires_action" and phase is None
    frame = "◆" if waiting else _SPINNER[int(elapsed * FPS) % len(_SPINNER)]
    text = Text.assemble(
        (frame + " ", "yellow" if waiting else "cyan"),
        (phase or foreground_text(state), "bold"),
        (f" · {elapsed_text(elapsed)}", "dim"),
    )
    usage = usage_text(state.usage)
    if usage:
        text.append(f" · {usage}", style="dim")
    if hint:
        text.append(f" · {hint}", style="dim")
    text.no_wrap, text.overflow = True, "ellipsis"
    return text


@dataclass
class LiveRegion:
    """The in-progress part of a turn: unsettled entries, changed plans, a status line.

    ``phase`` (e.g. ``cancelling…``) replaces the foreground state in the status line;
    ``clock`` is injectable for tests.
    """

    state: SessionState
    settler: Settler
    view: View = field(default_factory=lambda: View(live=True, show_user=False))
    phase: str | None = None
    hint: str | None = "ctrl-c to cancel"
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    #: Prompts typed during the turn, sent in order once it ends.
    queued: list[str] = field(default_factory=list)
    #: The line being typed during the turn (read at each frame).
    typing: Callable[[], str] = field(default=lambda: "")
    #: What the status line adds after the usage (the model name).
    extras: Callable[[], list[str]] = field(default=lambda: [])
    #: An observer's region: a question waits for a controller, not for this chat.
    watching: bool = False

    def __post_init__(self) -> None:
        self.started = self.clock()

    def body(self) -> Iterator[RenderableType]:
        """The renderables of the entries not printed yet."""
        for entry in self.settler.pending():
            block = entry_block(entry, self.state, self.view)
            if block is not None:
                yield block

    def input_lines(self) -> list[Text]:
        """The queued prompts and the line being typed, below the status line."""
        lines = [_one_line("⧗ queued ", text, "yellow") for text in self.queued]
        typing = self.typing()
        if typing:
            lines.append(_one_line("❯ ", typing + "▏", "bold cyan"))
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = options.height or console.height
        phase = self.phase
        if phase is None and self.watching and self.state.foreground == "requires_action":
            phase = "waiting for a controller"
        status = status_line(
            self.state, phase=phase, elapsed=self.clock() - self.started, hint=self.hint
        )
        extras = self.extras()
        if extras:
            status.append("".join(f" · {extra}" for extra in extras), style="dim")
        below = self.input_lines()[-max(0, height - 3) :] if height > 3 else []
        blocks = list(self.body())
        if blocks:
            yield TailCrop(Group(*blocks), max(1, height - 2 - len(below)))
        yield status
        yield from below


def _one_line(lead: str, text: str, style: str) -> Text:
    """``lead`` then ``text`` on one line (newlines shown as ``↵``), cut with ``…``."""
    line = Text.assemble((lead, style), text.replace("\n", " ↵ "))
    line.no_wrap, line.overflow = True, "ellipsis"
    return line


class PausableLive:
    """A live region that can be paused for a prompt and resumed.

    Each resume starts a fresh :class:`~rich.live.Live`: a stopped one that is started
    again still remembers its old height and would erase the lines printed meanwhile.
    Transient: the region leaves the screen when paused or stopped.
    """

    def __init__(self, console: Console, renderable: RenderableType) -> None:
        self.console = console
        self.renderable = renderable
        self._live: Live | None = None
        self._shown = anyio.Event()
        #: How many times the region was shown (each resume counts).
        self.starts = 0

    @property
    def active(self) -> bool:
        """True while the region is on screen."""
        return self._live is not None

    def start(self) -> None:
        """Show the region (no-op when shown)."""
        if self._live is None:
            self._live = Live(
                self.renderable, console=self.console, auto_refresh=False, transient=True
            )
            self._live.start(refresh=True)
            self.starts += 1
            self._shown.set()

    def stop(self) -> None:
        """Take the region off the screen (no-op when hidden)."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()
            self._shown = anyio.Event()

    async def wait_active(self) -> None:
        """Return once the region is on screen (at once when it is)."""
        if self._live is None:
            await self._shown.wait()

    def refresh(self) -> None:
        """Redraw the region from its renderable."""
        if self._live is not None:
            self._live.refresh()

    def __enter__(self) -> PausableLive:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
