"""A hand-written ACP v2 agent (a plain JSON-RPC loop) for testing ``acp2 check``.

Correct by default (Aug rules; ``--nov`` answers version 1 with -32022 and rejects batches
as the TypeScript SDK 2.4.0 does; ``--no-session`` advertises no session capability and
has no session methods; ``--notify-auth`` sends an unsolicited ``_auth/status_update``
extension notification right after answering ``initialize`` and then at random moments,
as real agents do; ``--slow-start SECONDS`` sleeps before reading stdin; ``--flaky-once
FILE`` makes the first prompt after a cancel hang, in the first process only, to imitate a
timing failure under load; ``--flaky-init FILE`` makes the second process to start never
answer ``initialize``; ``--v1-downgrade`` answers a request for version 1 in v1's shape,
as a dual-version agent does; ``--v1-zero-once FILE`` makes the first such answer, across
processes, say version 0; ``--slow-v1 SECONDS`` sleeps before answering a request for
version 1; ``--slow-after-init SECONDS`` answers ``initialize`` at once and
then sleeps, as an agent that answers it before loading the rest of itself;
``--lenient-utf8`` decodes a line of invalid UTF-8 with U+FFFD and runs it, as the
TypeScript SDK's reader does).
``--preview`` advertises and serves the Preview's unstable surface: ``session.fork``,
``session.title``, ``providers``, usage on idles and ``replay_complete`` after a replay,
and subagents: every turn spawns a child (``subagent_update``), messages it
(``session_message`` then a ``session_message_chunk`` under the child's id) and links it
from a completed tool call (``session`` content); a replaying resume re-announces each
child, replays its history and its own ``replay_complete`` before the parent's.
``--break RULE`` breaks exactly one rule:

  no-idle                never reports idle
  idle-no-stop-reason    ends normal turns with an idle that has no stopReason
  no-message-id          sends agent_message_chunk without messageId
  answers-notifications  answers every notification
  cancel-as-error        reports a cancel as an error stop reason
  stdout-logs            prints log lines to stdout
  dies-on-invalid-json   exits on a line that is not JSON
  empty-batch-array      answers ``[]`` with an array holding the -32600 error
  accepts-unknown-cancel answers tool_call/cancel and terminal/cancel for any id with {}
  duplicate-config-ids   lists the config option ``mode`` twice in session/new results
  idle-bad-usage         (--preview) usage on idles lacks outputTokens, inputTokens < 0
  fork-same-id           (--preview) answers session/fork with the source's id
  title-no-answer        (--preview) answers session/set_title with {}
  providers-headers      (--preview) lists a provider's headers in its current routing
  replay-complete-twice  (--preview) sends replay_complete twice per replay, and once
                         after a resume without replayFrom
  replay-child-twice     (--preview) sends a replayed child's replay_complete twice
  subagent-own-id        (--preview) sends a subagent_update naming the parent's own id
  subagent-late          (--preview) sends a child's first message before announcing it
  session-message-shape  (--preview) sends a session_message whose content is one block
  session-link-unknown   (--preview) links a tool call to a session never announced

Each session has one config option, the select ``mode`` (``ask`` / ``code``), served by
``session/set_config_option``.

Prompt scenarios (first word): ``echo <text>``, ``wait`` (until cancelled), ``permission``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import threading
import time
from typing import Any

parser = argparse.ArgumentParser()
parser.add_argument("--break", dest="broken", default="")
parser.add_argument("--nov", action="store_true")
parser.add_argument("--no-session", action="store_true")
parser.add_argument("--notify-auth", action="store_true")
parser.add_argument("--slow-start", type=float, default=0.0)
parser.add_argument("--flaky-once", default="")
parser.add_argument("--flaky-init", default="")
parser.add_argument("--v1-downgrade", action="store_true")
parser.add_argument("--v1-zero-once", default="")
parser.add_argument("--slow-v1", type=float, default=0.0)
parser.add_argument("--slow-after-init", type=float, default=0.0)
parser.add_argument("--lenient-utf8", action="store_true")
parser.add_argument("--preview", action="store_true")
ARGS = parser.parse_args()
BROKEN, NOV = ARGS.broken, ARGS.nov
LOCK = threading.Lock()
COUNTER = itertools.count(1)
SESSIONS: dict[str, Session] = {}
PENDING: dict[int, dict[str, Any]] = {}


def write(message: Any) -> None:
    line = json.dumps(message, separators=(",", ":"))
    with LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def log(text: str) -> None:
    if BROKEN == "stdout-logs":
        with LOCK:
            print(f"[reference-agent] {text}", flush=True)


def error(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": err}


class Session:
    def __init__(self, sid: str, cwd: str) -> None:
        self.id, self.cwd = sid, cwd
        self.history: list[dict[str, Any]] = []
        self.cancel = threading.Event()
        self.busy = False
        self.was_cancelled = False
        self.mode = "ask"
        self.children: list[Session] = []

    def update(self, update: dict[str, Any], *, keep: bool = False) -> None:
        if keep:
            self.history.append(update)
        write(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": self.id, "update": update},
            }
        )

    def state(self, state: str, reason: str | None = None, **extra: Any) -> None:
        update: dict[str, Any] = {"sessionUpdate": "state_update", "state": state}
        if reason is not None:
            update["stopReason"] = reason
        self.update({**update, **extra})

    def idle(self, reason: str) -> None:
        self.busy = False
        if BROKEN == "no-idle":
            return
        if reason == "cancelled" and BROKEN == "cancel-as-error":
            self.state("idle", "error", error={"code": -32800, "message": "Request cancelled"})
        elif reason == "end_turn" and BROKEN == "idle-no-stop-reason":
            self.state("idle")
        elif ARGS.preview:
            self.state("idle", reason, usage=idle_usage())
        else:
            self.state("idle", reason)

    def say(self, mid: str, text: str) -> None:
        chunk: dict[str, Any] = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": mid,
            "content": {"type": "text", "text": text},
        }
        if BROKEN == "no-message-id":
            del chunk["messageId"]
        self.update(chunk)


def ask_permission(session: Session) -> str:
    rid = 1000 + next(COUNTER)
    slot: dict[str, Any] = {"event": threading.Event()}
    PENDING[rid] = slot
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    write(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "session/request_permission",
            "params": {"sessionId": session.id, "title": "May I?", "options": options},
        }
    )
    session.state("requires_action")
    while not slot["event"].wait(0.02):
        if session.cancel.is_set():
            if NOV:
                write(
                    {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}
                )
            slot["event"].wait(2)
            return "cancelled"
    outcome = (slot.get("result") or {}).get("outcome") or {}
    return str(outcome.get("optionId") or outcome.get("outcome"))


def run_turn(session: Session, text: str, user: dict[str, Any]) -> None:
    session.update(user, keep=True)
    session.state("running")
    word, _, rest = text.partition(" ")
    mid = f"a{next(COUNTER)}"
    if ARGS.preview:
        spawn_child(session)
    if session.was_cancelled and flake_now():
        session.cancel.wait()  # hang this one turn, as an agent on an overloaded machine may
    elif word == "wait":
        session.say(mid, "Waiting until cancelled...")
        session.cancel.wait()
    elif word == "permission":
        choice = ask_permission(session)
        if choice != "cancelled":
            session.state("running")
            session.say(mid, f"You chose: {choice}")
    else:
        for i, piece in enumerate((rest if word == "echo" else text).split(" ")):
            session.say(mid, piece if i == 0 else " " + piece)
    session.history.append(
        {
            "sessionUpdate": "agent_message",
            "messageId": mid,
            "content": [{"type": "text", "text": "(reply)"}],
        }
    )
    session.was_cancelled = session.cancel.is_set()
    session.idle("cancelled" if session.was_cancelled else "end_turn")


def announce(parent: Session, child: Session) -> None:
    parent.update({"sessionUpdate": "subagent_update", "sessionId": child.id, "title": "helper"})


def spawn_child(parent: Session) -> None:
    """(--preview) Spawn a child session, message it and link it from a tool call."""
    child = Session(f"child_{next(COUNTER)}", parent.cwd)
    parent.children.append(child)
    mid = f"m{next(COUNTER)}"
    content: Any = [{"type": "text", "text": "Look around"}]
    if BROKEN == "session-message-shape":
        content = content[0]
    message = {
        "sessionUpdate": "session_message",
        "messageId": mid,
        "senderSessionId": parent.id,
        "recipientSessionId": child.id,
        "content": content,
    }
    if BROKEN == "subagent-late":
        child.update(message, keep=True)  # before the client was told of the child
    announce(parent, child)
    if BROKEN == "subagent-own-id":  # a patch naming the parent as its own child
        parent.update({"sessionUpdate": "subagent_update", "sessionId": parent.id})
    if BROKEN != "subagent-late":
        child.update(message, keep=True)
    text = {"type": "text", "text": " please"}
    child.update({"sessionUpdate": "session_message_chunk", "messageId": mid, "content": text})
    target = "sess_nowhere" if BROKEN == "session-link-unknown" else child.id
    link = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": f"t{next(COUNTER)}",
        "title": "Delegate",
        "kind": "other",
        "status": "completed",
        "content": [{"type": "session", "sessionId": target}],
    }
    parent.update(link, keep=True)


def replay_children(parent: Session) -> None:
    """(--preview) Re-announce each child, replay its history and its own marker."""
    for child in parent.children:
        announce(parent, child)
        for update in child.history:
            child.update(update)
        for _ in range(2 if BROKEN == "replay-child-twice" else 1):
            child.update({"sessionUpdate": "replay_complete"})


def claim(path: str) -> bool:
    """True for the first process (of all sharing ``path``) to claim it."""
    try:
        with open(path, "x"):
            return True
    except FileExistsError:
        return False


def flake_now() -> bool:
    """True once across all processes sharing the ``--flaky-once`` marker file."""
    if not ARGS.flaky_once:
        return False
    try:
        with open(ARGS.flaky_once, "x"):
            return True
    except FileExistsError:
        return False


def auth_notice() -> None:
    status = random.choice(("unauthenticated", "authenticated", "refreshing"))
    write({"jsonrpc": "2.0", "method": "_auth/status_update", "params": {"status": status}})


def start_auth_notices() -> None:
    """One notice right after initialize, then more at random moments (real agents do)."""
    auth_notice()

    def loop() -> None:
        while True:
            time.sleep(random.uniform(0.02, 0.5))
            auth_notice()

    threading.Thread(target=loop, daemon=True).start()


def on_prompt(id: Any, params: dict[str, Any]) -> list[Any]:
    session = SESSIONS.get(params.get("sessionId", ""))
    if session is None:
        return [error(id, -32002, "Unknown session", {"sessionId": params.get("sessionId")})]
    blocks = params.get("prompt") or []
    for block in blocks:
        if block.get("type") not in ("text", "resource_link"):
            return [error(id, -32602, f"Unsupported prompt block: {block.get('type')}")]
    log("prompt received")
    text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
    mid = f"u{next(COUNTER)}"
    session.cancel.clear()
    session.busy = True
    user = {"sessionUpdate": "user_message", "messageId": mid, "content": blocks}
    write({"jsonrpc": "2.0", "id": id, "result": {"messageId": mid}})  # before the turn starts
    threading.Thread(target=run_turn, args=(session, text, user), daemon=True).start()
    return []


def on_initialize(params: dict[str, Any]) -> Any:
    version = params.get("protocolVersion")
    if ARGS.flaky_init and claim(ARGS.flaky_init + ".1") is False and claim(ARGS.flaky_init + ".2"):
        threading.Event().wait()  # the second process to start never answers initialize
    if version == 1:
        time.sleep(ARGS.slow_v1)
    if ARGS.v1_downgrade and version == 1:
        caps = {"loadSession": False, "promptCapabilities": {"image": False}}
        info = {"name": "reference-agent", "version": "1"}
        first = bool(ARGS.v1_zero_once) and claim(ARGS.v1_zero_once)
        return {"protocolVersion": 0 if first else 1, "agentCapabilities": caps, "agentInfo": info}
    if NOV and isinstance(version, int) and version < 2:
        raise Reject(
            -32022, "Unsupported protocol version", {"requested": version, "supported": [2]}
        )
    caps: dict[str, Any] = {} if ARGS.no_session else {"session": {"prompt": {}, "delete": {}}}
    if ARGS.preview:
        caps["providers"] = {}
        caps.setdefault("session", {}).update({"fork": {}, "title": {}})
    return {
        "protocolVersion": 2,
        "info": {"name": "reference-agent", "version": "1"},
        "capabilities": caps,
    }


def on_resume(params: dict[str, Any]) -> Any:
    session = SESSIONS.get(params.get("sessionId", ""))
    if session is None:
        raise Reject(-32002, "Unknown session", {"sessionId": params.get("sessionId")})
    replay = (params.get("replayFrom") or {}).get("type") == "start"
    if replay and ARGS.preview:
        replay_children(session)
    if replay:
        for update in session.history:
            session.update(update)
    twice = BROKEN == "replay-complete-twice"
    if ARGS.preview and (replay or twice):
        for _ in range(2 if twice and replay else 1):
            session.update({"sessionUpdate": "replay_complete"})
    session.state("running" if session.busy else "idle")
    return {}


def idle_usage() -> dict[str, Any]:
    if BROKEN == "idle-bad-usage":
        return {"totalTokens": 12, "inputTokens": -1}
    return {"totalTokens": 12, "inputTokens": 10, "outputTokens": 2, "cachedReadTokens": 4}


def on_fork(params: dict[str, Any]) -> Any:
    source = SESSIONS.get(params.get("sessionId", ""))
    if source is None:
        raise Reject(-32002, "Unknown session", {"sessionId": params.get("sessionId")})
    if BROKEN == "fork-same-id":
        return {"sessionId": source.id}
    forked = new_session({"cwd": params.get("cwd", source.cwd)})
    SESSIONS[forked["sessionId"]].history = list(source.history)
    return forked


def on_title(params: dict[str, Any]) -> Any:
    title = " ".join(str(params.get("title", "")).split())
    return {} if BROKEN == "title-no-answer" else {"title": title}


def on_providers(params: dict[str, Any]) -> Any:
    current: dict[str, Any] = {"apiType": "openai", "baseUrl": "http://127.0.0.1:9/v1"}
    if BROKEN == "providers-headers":
        current["headers"] = {"Authorization": "Bearer sk-leaked"}
    return {"providers": [{"providerId": "main", "supported": ["openai"], "current": current}]}


def on_close(params: dict[str, Any]) -> Any:
    session = SESSIONS.get(params.get("sessionId", ""))
    if session is not None:
        session.cancel.set()
    return {}


class Reject(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def config_options(mode: str) -> list[dict[str, Any]]:
    choices = [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}]
    option = {"type": "select", "configId": "mode", "name": "Mode", "options": choices}
    options = [{**option, "currentValue": mode}]
    if BROKEN == "duplicate-config-ids":
        options.append({**option, "currentValue": mode, "name": "Mode again"})
    return options


def new_session(params: dict[str, Any]) -> Any:
    sid = f"sess_{next(COUNTER)}"
    SESSIONS[sid] = Session(sid, params.get("cwd", "/"))
    return {"sessionId": sid, "configOptions": config_options(SESSIONS[sid].mode)}


def on_set_config_option(params: dict[str, Any]) -> Any:
    session = SESSIONS.get(params.get("sessionId", ""))
    if session is None:
        raise Reject(-32002, "Unknown session", {"sessionId": params.get("sessionId")})
    value = params.get("value")
    if params.get("configId") != "mode" or value not in ("ask", "code"):
        raise Reject(-32602, "Unknown config option or value")
    session.mode = value
    return {"configOptions": config_options(value)}


HANDLERS = {
    "initialize": on_initialize,
    "session/new": new_session,
    "session/list": lambda p: {
        "sessions": [{"sessionId": s.id, "cwd": s.cwd} for s in SESSIONS.values()]
    },
    "session/resume": on_resume,
    "session/close": on_close,
    "session/set_config_option": on_set_config_option,
    "session/delete": lambda p: (SESSIONS.pop(p.get("sessionId", ""), None), {})[1],
}
PREVIEW_HANDLERS = {
    "session/fork": on_fork,
    "session/set_title": on_title,
    "providers/list": on_providers,
    "providers/set": lambda p: {},
    "providers/disable": lambda p: {},
}


def on_request(msg: dict[str, Any]) -> list[Any]:
    id, method, params = msg["id"], msg["method"], msg.get("params") or {}
    if ARGS.no_session and method.startswith("session/"):
        return [error(id, -32601, f"Method not found: {method}")]
    if method == "session/prompt":
        return on_prompt(id, params)
    if BROKEN == "accepts-unknown-cancel" and method in ("tool_call/cancel", "terminal/cancel"):
        return [{"jsonrpc": "2.0", "id": id, "result": {}}]
    handler = HANDLERS.get(method) or (PREVIEW_HANDLERS.get(method) if ARGS.preview else None)
    if handler is None:
        return [error(id, -32601, f"Method not found: {method}")]
    try:
        return [{"jsonrpc": "2.0", "id": id, "result": handler(params)}]
    except Reject as exc:
        return [error(id, exc.code, exc.message, exc.data)]


def on_message(msg: Any) -> list[Any]:
    """Handle one message; return the responses to send."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return [error(None, -32600, "Invalid request")]
    if "method" not in msg:
        slot = PENDING.pop(msg.get("id"), None) if "id" in msg else None
        if slot is not None:
            slot["result"] = msg.get("result")
            slot["event"].set()
        return []
    if not isinstance(msg["method"], str):
        return [error(None, -32600, "Invalid request")]
    if "id" in msg:
        return on_request(msg)
    if msg["method"] == "session/cancel":
        session = SESSIONS.get((msg.get("params") or {}).get("sessionId", ""))
        if session is not None:
            session.cancel.set()
    return (
        [{"jsonrpc": "2.0", "id": None, "result": None}]
        if BROKEN == "answers-notifications"
        else []
    )


def on_line(raw: bytes) -> None:
    try:
        msg = json.loads(raw.decode("utf-8", errors="replace" if ARGS.lenient_utf8 else "strict"))
    except (UnicodeDecodeError, ValueError):
        if BROKEN == "dies-on-invalid-json":
            raise
        write(error(None, -32700, "Parse error"))
        return
    if isinstance(msg, list):
        if not msg and BROKEN == "empty-batch-array":
            write([error(None, -32600, "Invalid request: empty batch")])
            return
        if not msg or NOV:
            write(
                error(
                    None,
                    -32600,
                    "Invalid request: batches are not supported"
                    if msg
                    else "Invalid request: empty batch",
                )
            )
            return
        answers = [a for entry in msg for a in on_message(entry)]
        if answers:
            write(answers)
        return
    for answer in on_message(msg):
        write(answer)
    initialized = isinstance(msg, dict) and msg.get("method") == "initialize"
    if ARGS.notify_auth and initialized:
        start_auth_notices()
    if initialized:
        time.sleep(ARGS.slow_after_init)


def main() -> None:
    log("reference agent starting")
    time.sleep(ARGS.slow_start)
    for raw in sys.stdin.buffer:
        if raw.strip():
            on_line(raw.rstrip(b"\r\n"))
    os._exit(0)


if __name__ == "__main__":
    main()
