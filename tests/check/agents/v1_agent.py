"""A hand-written ACP v1 agent (a plain JSON-RPC loop) for testing ``acp2 check``.

Correct by default: it answers ``protocolVersion`` 1 to any ``initialize``, in v1's shape
(``agentInfo``, ``agentCapabilities`` with ``loadSession``), holds each ``session/prompt``
open until its turn ends and answers it with the ``stopReason``, answers a cancelled
prompt ``cancelled``, and replays a session on ``session/load`` before answering.
``--no-load`` advertises no ``loadSession``. ``--break RULE`` breaks exactly one rule:

  answers-early        answers session/prompt at once, then sends the turn's updates
  ignores-cancel       answers a cancelled prompt end_turn instead of cancelled
  cancel-as-error      answers a cancelled prompt with a -32800 error
  load-after-answer    answers session/load first, then replays

Prompt scenarios (first word): ``echo <text>`` (one chunk), ``wait`` (until cancelled),
``permission`` (a ``tool_call``, then ``session/request_permission`` for it; the tool call
fails unless allowed; a ``cancelled`` outcome ends the turn ``cancelled``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import threading
from typing import Any

parser = argparse.ArgumentParser()
parser.add_argument("--break", dest="broken", default="")
parser.add_argument("--no-load", action="store_true")
ARGS = parser.parse_args()
BROKEN = ARGS.broken
LOCK = threading.Lock()
COUNTER = itertools.count(1)
SESSIONS: dict[str, Session] = {}
PENDING: dict[Any, dict[str, Any]] = {}


def write(message: Any) -> None:
    line = json.dumps(message, separators=(",", ":"))
    with LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def answer(id: Any, result: Any) -> None:
    write({"jsonrpc": "2.0", "id": id, "result": result})


def error(id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


class Session:
    def __init__(self, sid: str) -> None:
        self.id = sid
        self.history: list[dict[str, Any]] = []
        self.cancel = threading.Event()

    def update(self, update: dict[str, Any]) -> None:
        self.history.append(update)
        params = {"sessionId": self.id, "update": update}
        write({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def say(self, text: str) -> None:
        self.update({"sessionUpdate": "agent_message_chunk", "content": _text(text)})


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def ask_permission(session: Session) -> str:
    """Announce a tool call, ask about it, and wait for the client's answer."""
    call = f"call_{next(COUNTER)}"
    session.update(
        {"sessionUpdate": "tool_call", "toolCallId": call, "title": "Edit", "status": "pending"}
    )
    rid = f"perm_{next(COUNTER)}"
    slot: dict[str, Any] = {"event": threading.Event()}
    PENDING[rid] = slot
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    params = {"sessionId": session.id, "toolCall": {"toolCallId": call}, "options": options}
    write({"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params})
    slot["event"].wait(30)
    outcome = (slot.get("result") or {}).get("outcome") or {}
    choice = str(outcome.get("optionId") or outcome.get("outcome"))
    status = "completed" if choice == "allow" else "failed"
    session.update({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": status})
    return choice


def run_turn(session: Session, id: Any, text: str) -> None:
    session.history.append({"sessionUpdate": "user_message_chunk", "content": _text(text)})
    word, _, rest = text.partition(" ")
    if BROKEN == "answers-early":
        answer(id, {"stopReason": "end_turn"})
    if word == "wait":
        session.say("Waiting until cancelled...")
        session.cancel.wait()
    elif word == "permission":
        if ask_permission(session) == "cancelled":
            session.cancel.set()
    else:
        session.say(rest if word == "echo" else text)
    if BROKEN == "answers-early":
        return
    if not session.cancel.is_set() or BROKEN == "ignores-cancel":
        answer(id, {"stopReason": "end_turn"})
    elif BROKEN == "cancel-as-error":
        write(error(id, -32800, "Request cancelled"))
    else:
        answer(id, {"stopReason": "cancelled"})


def on_prompt(id: Any, params: dict[str, Any]) -> None:
    session = SESSIONS.get(params.get("sessionId", ""))
    if session is None:
        write(error(id, -32602, "Unknown session"))
        return
    blocks = params.get("prompt") or []
    text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
    session.cancel.clear()
    threading.Thread(target=run_turn, args=(session, id, text), daemon=True).start()


def on_load(id: Any, params: dict[str, Any]) -> None:
    session = SESSIONS.get(params.get("sessionId", ""))
    if session is None or ARGS.no_load:
        write(error(id, -32602 if session is None else -32601, "Cannot load"))
        return
    if BROKEN == "load-after-answer":
        answer(id, {})
    for update in list(session.history):
        params = {"sessionId": session.id, "update": update}
        write({"jsonrpc": "2.0", "method": "session/update", "params": params})
    if BROKEN != "load-after-answer":
        answer(id, {})


def on_initialize(id: Any, params: dict[str, Any]) -> None:
    caps = {"loadSession": not ARGS.no_load, "promptCapabilities": {"embeddedContext": True}}
    info = {"name": "v1-fixture-agent", "version": "1"}
    answer(id, {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info})


def on_new(id: Any, params: dict[str, Any]) -> None:
    sid = f"sess_{next(COUNTER)}"
    SESSIONS[sid] = Session(sid)
    answer(id, {"sessionId": sid})


HANDLERS = {
    "initialize": on_initialize,
    "session/new": on_new,
    "session/load": on_load,
    "session/prompt": on_prompt,
}


def on_message(msg: Any) -> None:
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        write(error(None, -32600, "Invalid request"))
        return
    if "method" not in msg:
        slot = PENDING.pop(msg.get("id"), None)  # an answer to a permission request
        if slot is not None:
            slot["result"] = msg.get("result")
            slot["event"].set()
        return
    if not isinstance(msg["method"], str):
        write(error(None, -32600, "Invalid request"))
        return
    if "id" not in msg:
        if msg["method"] == "session/cancel":
            session = SESSIONS.get((msg.get("params") or {}).get("sessionId", ""))
            if session is not None:
                session.cancel.set()
        return
    handler = HANDLERS.get(msg["method"])
    if handler is None:
        write(error(msg["id"], -32601, f"Method not found: {msg['method']}"))
    else:
        handler(msg["id"], msg.get("params") or {})


def main() -> None:
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        try:
            msg = json.loads(raw.rstrip(b"\r\n").decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            write(error(None, -32700, "Parse error"))
            continue
        if isinstance(msg, list):
            write(error(None, -32600, "Invalid request: batches are not supported"))
            continue
        on_message(msg)
    os._exit(0)


if __name__ == "__main__":
    main()
