"""The probe driver: one agent process, raw bytes in, every stdout line recorded.

:func:`open_link` starts the agent (in its own process group), reads its stdout in
chunks and splits it into lines itself -- the checker must see exactly what the agent
wrote, blank lines and garbage included -- and drains stderr into a bounded tail.
Every wait is bounded: :meth:`ClientCore.wait_for` returns None on timeout or when the
agent has exited, never hangs. Requests the agent sends are answered automatically
(``-32601``; permission requests with a reject option) unless a probe takes them over.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from acp2.check.frames import Frame, is_request, is_response, parse_line, same_id, short
from acp2.check.remote import RemoteAgent, remote_agent
from acp2.check.spawn import AgentStartError, start_process
from acp2.check.versions import is_v1_result
from acp2.schema.methods import INITIALIZE, SESSION_REQUEST_PERMISSION
from acp2.transport.procgroup import stop_group

__all__ = ["AgentStartError", "ClientCore", "Sent", "open_link", "permission_answer"]

STDERR_TAIL = 4096
READ_SIZE = 65536


@dataclass(frozen=True)
class Sent:
    """One chunk of bytes the checker wrote to the agent's stdin."""

    t: float
    raw: bytes
    step: str

    def evidence(self, limit: int = 240) -> str:
        """A one-line, truncated rendering for the report (``->`` marks what we sent)."""
        line = self.raw[:-1] if self.raw.endswith(b"\n") else self.raw
        return f"+{self.t:.3f}s [{self.step}] -> {short(line, limit)}"


def permission_answer(frame: Frame, prefer: str = "reject") -> dict[str, Any]:
    """A ``session/request_permission`` result picking an option whose kind starts with
    ``prefer`` (else the first option), or ``cancelled`` when no option is usable."""
    params = frame.value.get("params") if isinstance(frame.value, dict) else None
    options = params.get("options") if isinstance(params, dict) else None
    usable = [
        o for o in options or [] if isinstance(o, dict) and isinstance(o.get("optionId"), str)
    ]
    chosen = next((o for o in usable if str(o.get("kind", "")).startswith(prefer)), None)
    chosen = chosen or (usable[0] if usable else None)
    if chosen is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}


class ClientCore:
    """A running agent process and everything exchanged with it."""

    def __init__(self, process: Process, label: str, timeout: float, tg: TaskGroup) -> None:
        self.process = process
        self.label = label
        self.timeout = timeout
        self.frames: list[Frame] = []
        self.sent: list[Sent] = []
        self.eof = False
        self.manual_permissions = False
        self.called: list[tuple[Any, str]] = []
        #: The harmless request used to see whether the agent still answers (a baseline
        #: method once the agent advertised sessions, else an extension request).
        self.ping_call: tuple[str, Any] = ("_acp2check/ping", None)
        #: The capabilities from the agent's initialize result (set by the handshake).
        self.capabilities: dict[str, Any] | None = None
        #: The protocol version this link speaks: 1 once the agent answered initialize in
        #: v1's shape (its frames are then validated against the v1 schema), else 2.
        self.version = 2
        self._tg = tg
        self._start = time.monotonic()
        self._step = "start"
        self._changed = anyio.Event()
        self._stderr = b""
        self._next_id = 0
        self._pending = b""

    # -- bookkeeping -------------------------------------------------------------------

    def now(self) -> float:
        """Seconds since the agent was started."""
        return time.monotonic() - self._start

    def step(self, name: str) -> int:
        """Name what the checker does next (recorded on frames); return the frame mark."""
        self._step = name
        return len(self.frames)

    def mark(self) -> int:
        """The index the next frame will get (use as ``since`` for waits)."""
        return len(self.frames)

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has exited, else None."""
        return self.process.returncode

    def stderr_tail(self) -> str:
        """The last few KiB the agent wrote to stderr."""
        return self._stderr.decode("utf-8", errors="replace")

    def exit_note(self) -> str:
        """A clause saying the agent is gone, with its exit code and last stderr lines;
        empty while the agent is still running."""
        if not self.eof:
            return ""
        code = self.returncode
        lines = [line.strip() for line in self.stderr_tail().splitlines()]
        useful = [line for line in lines if line.strip("|^~-+ ")][-3:]
        said = f"; stderr: {' / '.join(useful)[-300:]}" if useful else ""
        exited = f", exit code {code}" if code is not None else ""
        return f" (the agent closed stdout{exited}{said})"

    # -- sending -------------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        """Write ``data`` to the agent's stdin exactly as given; a dead agent is ignored."""
        self.sent.append(Sent(self.now(), data, self._step))
        stdin = self.process.stdin
        if stdin is None:
            return
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await stdin.send(data)

    async def send(self, message: Any) -> None:
        """Write one compact JSON message and its newline."""
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        await self.send_raw(data.encode() + b"\n")

    async def request(self, method: str, params: Any = None, *, id: Any = None) -> Any:
        """Send a request (an integer id of our own unless ``id`` is given); return the id."""
        if id is None:
            self._next_id += 1
            id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.expect(id, method)
        await self.send(message)
        return id

    def expect(self, id: Any, method: str) -> None:
        """Note that a request ``id`` for ``method`` was sent (raw batches call this)."""
        self.called.append((id, method))

    def method_of(self, id: Any) -> str | None:
        """The method of our request with this id (same JSON type), or None."""
        return next((m for i, m in self.called if same_id(i, id)), None)

    async def ping(self, id: Any) -> None:
        """Send the ping request (see ``ping_call``) with ``id``."""
        await self.request(self.ping_call[0], self.ping_call[1], id=id)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def reply(self, request: Frame, result: Any) -> None:
        """Answer a request the agent sent with ``result``."""
        await self.send({"jsonrpc": "2.0", "id": request.value.get("id"), "result": result})

    async def call(
        self, method: str, params: Any = None, *, id: Any = None, within: float | None = None
    ) -> Frame | None:
        """Send a request and wait (bounded: ``within``, default the probe timeout) for its
        response frame."""
        since = self.mark()
        rid = await self.request(method, params, id=id)
        return await self.response(rid, since=since, within=within)

    # -- waiting ---------------------------------------------------------------------------

    async def wait_for(
        self, pred: Callable[[Frame], bool], *, since: int = 0, within: float | None = None
    ) -> Frame | None:
        """The first frame from index ``since`` on that satisfies ``pred``; None when none
        arrives ``within`` seconds (default: the probe timeout) or the agent is gone."""
        deadline = time.monotonic() + (self.timeout if within is None else within)
        i = since
        while True:
            while i < len(self.frames):
                frame = self.frames[i]
                i += 1
                if frame.ok and pred(frame):
                    return frame
            remaining = deadline - time.monotonic()
            if self.eof or remaining <= 0:
                return None
            changed = self._changed
            with anyio.move_on_after(remaining):
                await changed.wait()

    async def response(
        self, id: Any, *, since: int = 0, within: float | None = None
    ) -> Frame | None:
        """The response to our request ``id`` (same value and JSON type), or None."""

        def match(f: Frame) -> bool:
            v = f.value
            return isinstance(v, dict) and "method" not in v and same_id(v.get("id"), id)

        return await self.wait_for(match, since=since, within=within)

    async def settle(self, duration: float) -> None:
        """Let the agent talk for ``duration`` seconds (returns early if it exits)."""
        with anyio.move_on_after(duration):
            while not self.eof:
                changed = self._changed
                await changed.wait()

    async def close_stdin(self) -> None:
        """Close the agent's stdin (end of the connection, TR-06)."""
        self.sent.append(Sent(self.now(), b"", "close stdin"))
        if self.process.stdin is not None:
            with anyio.CancelScope(shield=True):
                await self.process.stdin.aclose()

    async def wait_exit(self, within: float) -> int | None:
        """Wait up to ``within`` seconds for the process to exit; its code or None."""
        with anyio.move_on_after(within):
            return await self.process.wait()
        return None

    # -- reading ---------------------------------------------------------------------------

    def _record(self, raw: bytes) -> None:
        value, problem = parse_line(raw)
        frame = Frame(len(self.frames), self.now(), raw, self._step, value, problem)
        self.frames.append(frame)
        if is_request(value):
            self._answer_agent_request(frame)
        elif self._answers_initialize_in_v1(value):
            # Noted here, not by the waiting probe: a late answer still decides which
            # schema the link's frames are validated against.
            self.version = 1
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def _answers_initialize_in_v1(self, value: Any) -> bool:
        if not is_response(value) or self.method_of(value.get("id")) != INITIALIZE.name:
            return False
        return is_v1_result(value.get("result"))

    def _answer_agent_request(self, frame: Frame) -> None:
        method = frame.value.get("method")
        if method == SESSION_REQUEST_PERMISSION.name:
            if not self.manual_permissions:
                self._tg.start_soon(self.reply, frame, permission_answer(frame))
            return
        error = {"code": -32601, "message": f"Method not found: {method}"}
        answer = {"jsonrpc": "2.0", "id": frame.value.get("id"), "error": error}
        self._tg.start_soon(self.send, answer)

    async def _read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                chunk = await stdout.receive(READ_SIZE)
                lines = (self._pending + chunk).split(b"\n")
                self._pending = lines.pop()
                for raw in lines:
                    self._record(raw)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        if self._pending:
            self._record(self._pending)
            self._pending = b""
        self.eof = True
        self._changed.set()

    async def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        try:
            while True:
                self._stderr = (self._stderr + await stderr.receive(READ_SIZE))[-STDERR_TAIL:]
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _shutdown(self) -> None:
        """Close stdin, then stop the process group and reap the agent
        (:func:`~acp2.transport.procgroup.stop_group` with its default timings); a
        remote agent's connection is just closed."""
        if isinstance(self.process, RemoteAgent):
            await self.close_stdin()
            return
        await stop_group(self.process, self.close_stdin)


@asynccontextmanager
async def open_link(
    argv: Sequence[str],
    *,
    label: str,
    wait_limit: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    remote: tuple[str, str | None] | None = None,
) -> AsyncIterator[ClientCore]:
    """Start the agent and yield its :class:`ClientCore`; on exit, stop and reap it.

    ``wait_limit`` is the default bound of every wait on the link. ``remote`` (URL,
    token) connects to a remote agent instead of starting ``argv``
    (:mod:`acp2.check.remote`).

    Raises :class:`AgentStartError` when the command cannot be started or the remote
    agent refuses the connection.
    """
    async with AsyncExitStack() as stack:
        if remote is None:
            process = await start_process(argv, cwd=cwd, env=env)
        else:
            process = await stack.enter_async_context(_remote(*remote))
        async with _linked(process, label, wait_limit) as link:
            yield link


@asynccontextmanager
async def _remote(url: str, token: str | None) -> AsyncIterator[Process]:
    try:
        opened = remote_agent(url, token)
        agent = await opened.__aenter__()
    except ConnectionError as exc:
        raise AgentStartError(str(exc)) from exc
    try:
        yield agent
    finally:
        await opened.__aexit__(None, None, None)


@asynccontextmanager
async def _linked(process: Process, label: str, wait_limit: float) -> AsyncIterator[ClientCore]:
    failure: Exception | None = None
    async with process, anyio.create_task_group() as tg:
        link = ClientCore(process, label, wait_limit, tg)
        tg.start_soon(link._read_stdout)
        tg.start_soon(link._drain_stderr)
        try:
            yield link
        except Exception as exc:  # re-raised below, so the task group does not wrap it
            failure = exc
        finally:
            with anyio.CancelScope(shield=True):
                await link._shutdown()
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
