"""Helpers for the ``acp2 chat --attach`` tests: a real ``acp2 serve --test-agent`` on
127.0.0.1 (a subprocess), and a chat subprocess whose transcript is read line by line."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from cli_helpers import ACP2

from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

__all__ = ["ChatProcess", "chat_process", "free_port", "serve_process"]


def free_port() -> int:
    """A loopback port nobody listens on (just now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_process(env: dict[str, str], port: int = 0) -> Iterator[str]:
    """``acp2 serve --test-agent`` on ``port`` (0: any); yields its URL."""
    argv = [*ACP2, "serve", "--test-agent", "--no-token", "--port", str(port)]
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert "listening on " in line, line
        yield line.split("listening on ", 1)[1].strip()
    finally:
        server.terminate()
        server.wait(PROCESS_TIMEOUT)
        if server.stderr is not None:
            server.stderr.close()


class ChatProcess:
    """A running ``acp2 chat`` with piped input (plain transcript mode): :meth:`send` a
    line, :meth:`expect` one of the transcript; ``lines`` is everything read so far."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None
        self._text = TextReceiveStream(process.stdout)
        self._buffer = ""
        self.lines: list[str] = []

    async def send(self, line: str) -> None:
        """Type ``line`` (a newline is added)."""
        assert self.process.stdin is not None
        await self.process.stdin.send((line + "\n").encode())

    async def close_input(self) -> None:
        """End the chat's input (Ctrl-D)."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def expect(self, text: str, bound: float = TIMEOUT) -> str:
        """The next line containing ``text`` (a wait bounded by ``bound`` seconds); the lines
        before it are kept in ``lines`` too."""
        with anyio.move_on_after(bound):
            while True:
                while "\n" in self._buffer:
                    line, self._buffer = self._buffer.split("\n", 1)
                    self.lines.append(line)
                    if text in line:
                        return line
                try:
                    self._buffer += await self._text.receive()
                except anyio.EndOfStream:
                    break
        raise AssertionError(f"{text!r} never came: {self.lines} {self._buffer!r}")

    async def partial(self, text: str) -> None:
        """Wait until ``text`` was printed, also when no newline ends it yet (a question)."""
        with anyio.fail_after(TIMEOUT):
            while text not in self._buffer and not any(text in line for line in self.lines):
                try:
                    self._buffer += await self._text.receive()
                except anyio.EndOfStream:
                    raise AssertionError(f"{text!r} never came: {self.lines}") from None

    async def rest(self) -> list[str]:
        """Every line until the chat's output ends (bounded)."""
        with anyio.fail_after(TIMEOUT):
            async for chunk in self._text:
                self._buffer += chunk
        self.lines.extend(self._buffer.splitlines())
        self._buffer = ""
        return self.lines

    async def wait(self) -> int:
        """The exit status (bounded wait)."""
        with anyio.fail_after(TIMEOUT):
            return await self.process.wait()


@contextlib.asynccontextmanager
async def chat_process(
    args: list[str], env: dict[str, str], cwd: Path
) -> AsyncIterator[ChatProcess]:
    """Start ``acp2 chat ARGS`` with piped stdin/stdout (stderr joined to stdout)."""
    process = await anyio.open_process(
        [*ACP2, "chat", *args], env=env, cwd=cwd, stderr=subprocess.STDOUT
    )
    async with process:
        try:
            yield ChatProcess(process)
        finally:
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(PROCESS_TIMEOUT):
                    await process.wait()
