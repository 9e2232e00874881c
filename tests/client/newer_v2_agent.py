"""A v2 agent that sends what newer adapters send and acp2 may not model (run as a script).

Shaped after claude-agent-acp 0.101 / codex-acp 2.6: capabilities acp2 models
(``providers``, ``session.fork`` / ``systemPrompt`` / ``title``) next to keys it does not
(``session.futureThing``, ``capabilities.experimentalX``), an idle ``state_update`` with
``usage`` and an extra key, a session result with an extra key, and an extension
notification ``_auth/status_update`` before the turn ends. Each prompt answers ``hi``.
"""

from __future__ import annotations

import json
import sys

AUTH_STATUS = {"state": "authenticated", "accounts": [{"id": "me"}]}


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer(msg: dict, result: object) -> None:
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def update(session: str, kind: str, **fields: object) -> None:
    params = {"sessionId": session, "update": {"sessionUpdate": kind, **fields}}
    send({"jsonrpc": "2.0", "method": "session/update", "params": params})


CAPABILITIES = {
    "providers": {},
    "session": {"fork": {}, "title": {}, "systemPrompt": {}, "futureThing": {"x": 1}},
    "experimentalX": True,
}


def prompt(msg: dict) -> None:
    session = msg["params"]["sessionId"]
    answer(msg, {"messageId": "u1"})
    update(session, "user_message", messageId="u1", content=msg["params"]["prompt"])
    update(session, "state_update", state="running")
    update(session, "agent_message_chunk", messageId="m1", content={"type": "text", "text": "hi"})
    send({"jsonrpc": "2.0", "method": "_auth/status_update", "params": AUTH_STATUS})
    usage = {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1, "reasoningTokensX": 7}
    update(
        session,
        "state_update",
        state="idle",
        stopReason="end_turn",
        usage=usage,
        turnCostX={"amount": 0.1},
    )


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "initialize":
            info = {"name": "newer-v2", "version": "0.101"}
            answer(msg, {"protocolVersion": 2, "info": info, "capabilities": CAPABILITIES})
        elif method == "session/new":
            answer(msg, {"sessionId": "s1", "titleX": "untitled"})
        elif method == "session/prompt":
            prompt(msg)
        elif "id" in msg:
            answer(msg, {})


if __name__ == "__main__":
    main()
