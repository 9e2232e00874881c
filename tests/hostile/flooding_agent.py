"""A flooding ACP agent for the client's memory tests (run as a script, stdlib only).

``python flooding_agent.py``: a normal handshake and session; the prompt's text selects
the flood, written as fast as the pipe takes it:

* ``text N``: ``N`` plain ``agent_message_chunk`` updates of one message (``"tok{i} "``);
* ``mixed N``: ``N`` rounds of four interleaved updates that do not coalesce with their
  neighbours: a message chunk ``"{i} "``, a thought chunk ``"{i} "``, a title patch
  ``"step {i}"`` of tool call ``c1`` and a terminal output chunk ``"{i}\\n"`` of ``t1``.

Each flood ends with ``idle`` / ``end_turn`` sent twice (the second is a snapshot the
client must not count as the end of another work).
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator

SESSION = "s1"
BATCH = 2000


def line(obj: object) -> bytes:
    """One JSON-RPC line."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def update(kind: str, **fields: object) -> bytes:
    """A ``session/update`` notification line."""
    params = {"sessionId": SESSION, "update": {"sessionUpdate": kind, **fields}}
    return line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def text_flood(count: int) -> Iterator[bytes]:
    """Chunks of one message."""
    head = update("agent_message_chunk", messageId="m1", content={"type": "text", "text": "#"})
    before, _, after = head.partition(b'"#"')
    for i in range(count):
        yield before + b'"tok%d "' % i + after


def mixed_flood(count: int) -> Iterator[bytes]:
    """Four kinds, interleaved."""
    yield update("tool_call_update", toolCallId="c1", title="flood", status="in_progress")
    yield update("terminal_update", terminalId="t1", command="flood")
    for i in range(count):
        text = {"type": "text", "text": f"{i} "}
        yield update("agent_message_chunk", messageId="m1", content=text)
        yield update("agent_thought_chunk", messageId="th1", content=text)
        yield update("tool_call_update", toolCallId="c1", title=f"step {i}")
        data = base64.b64encode(f"{i}\n".encode()).decode()
        yield update("terminal_output_chunk", terminalId="t1", data=data)


def flood(lines: Iterator[bytes]) -> None:
    """Write ``lines`` in big writes."""
    out = sys.stdout.buffer
    batch: list[bytes] = []
    for item in lines:
        batch.append(item)
        if len(batch) >= BATCH:
            out.write(b"".join(batch))
            batch.clear()
    out.write(b"".join(batch))
    out.flush()


def serve() -> None:
    """Answer the handshake and one session; flood on every prompt."""
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            info = {"name": "flooder", "version": "0"}
            result = {"protocolVersion": 2, "info": info, "capabilities": {"session": {}}}
            out.write(line({"jsonrpc": "2.0", "id": rid, "result": result}))
        elif method == "session/new":
            out.write(line({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": SESSION}}))
        elif method == "session/prompt":
            out.write(line({"jsonrpc": "2.0", "id": rid, "result": {"messageId": "u1"}}))
            out.write(update("state_update", state="running"))
            mode, count = msg["params"]["prompt"][0]["text"].split()
            flood(text_flood(int(count)) if mode == "text" else mixed_flood(int(count)))
            idle = update("state_update", state="idle", stopReason="end_turn")
            out.write(idle + idle)
        elif rid is not None:
            error = {"code": -32601, "message": "Method not found"}
            out.write(line({"jsonrpc": "2.0", "id": rid, "error": error}))
        out.flush()


if __name__ == "__main__":
    serve()
