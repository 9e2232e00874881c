"""An agent that answers a prompt and writes its whole turn in one burst (script, stdlib).

``python burst_agent.py``: a normal handshake and session ``s1``. Each prompt's text names
how the turn is written, all of it in one ``write`` (the client reads it in one chunk):

* ``burst``: the response (``messageId`` ``u1``), ``running``, a chunk, ``idle``; no user
  message;
* ``idle-first``: ``running``, the chunk and ``idle`` *before* the response;
* ``other-id``: a ``user_message`` with another id (``u9``) than the response's;
* ``no-running``: the response, the chunk, ``idle``;
* ``two-idles``: ``burst`` with ``idle`` sent twice;
* ``other-session``: ``burst`` whose ``idle`` names session ``s2``;
* ``aug``: an Aug response (``{}``, no ``messageId``), then ``burst``;
* ``aug-user``: ``aug`` with a ``user_message`` after the response;
* ``open``: the response, ``running`` and a chunk; the work stays open until the next
  prompt, which is answered only after this work's ``idle`` (a held prompt, PL-22);
* ``background``: a background tool call's update and an ``idle`` snapshot listing it,
  then ``burst`` (the snapshot is not this work's end).

The agent message always has the text ``hi`` (id ``a<n>`` for the n-th prompt).
"""

from __future__ import annotations

import json
import sys

SESSION = "s1"


def line(obj: object) -> bytes:
    """One JSON-RPC line."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def update(kind: str, session: str = SESSION, **fields: object) -> bytes:
    """A ``session/update`` notification line."""
    params = {"sessionId": session, "update": {"sessionUpdate": kind, **fields}}
    return line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def turn(mode: str, rid: object, n: int) -> bytes:
    """The burst for one prompt."""
    response = line({"jsonrpc": "2.0", "id": rid, "result": {"messageId": "u1"}})
    if mode.startswith("aug"):
        response = line({"jsonrpc": "2.0", "id": rid, "result": {}})
    running = update("state_update", state="running")
    chunk = update("agent_message_chunk", messageId=f"a{n}", content={"type": "text", "text": "hi"})
    idle = update("state_update", state="idle", stopReason="end_turn")
    user = update("user_message", messageId="u9" if mode == "other-id" else "u1", content=[])
    bursts = {
        "burst": response + running + chunk + idle,
        "idle-first": running + chunk + idle + response,
        "other-id": response + user + running + chunk + idle,
        "no-running": response + chunk + idle,
        "two-idles": response + running + chunk + idle + idle,
        "other-session": response + running + chunk + update("state_update", "s2", state="idle"),
        "aug": response + running + chunk + idle,
        "aug-user": response + user + running + chunk + idle,
        "open": response + running + chunk,
        "background": background() + response + running + chunk + idle,
    }
    return bursts[mode]


def background() -> bytes:
    """A background tool call and the idle snapshot that lists it (PL-12, PL-25)."""
    call = update("tool_call_update", toolCallId="bg1", title="watch", status="in_progress")
    listed = [{"type": "tool_call", "toolCallId": "bg1"}]
    return call + update("state_update", state="idle", background=listed)


def serve() -> None:
    """Answer the handshake and one session; one burst per prompt."""
    out = sys.stdout.buffer
    prompts = 0
    held = b""  # the idle that ends an ``open`` work, written before the next answer
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            info = {"name": "burst", "version": "0"}
            result = {"protocolVersion": 2, "info": info, "capabilities": {"session": {}}}
            out.write(line({"jsonrpc": "2.0", "id": rid, "result": result}))
        elif method == "session/new":
            out.write(line({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": SESSION}}))
        elif method == "session/prompt":
            prompts += 1
            mode = msg["params"]["prompt"][0]["text"]
            out.write(held + turn(mode, rid, prompts))
            held = update("state_update", state="idle", stopReason="end_turn")
            held = held if mode == "open" else b""
        elif rid is not None:
            error = {"code": -32601, "message": "Method not found"}
            out.write(line({"jsonrpc": "2.0", "id": rid, "error": error}))
        out.flush()


if __name__ == "__main__":
    serve()
