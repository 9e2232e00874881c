"""A deliberately broken ACP agent for the client's failure tests (run as a script).

``python misbehaving_agent.py MODE``; MODE is one of:

* ``crash-at-start``: writes a reason to stderr and exits 1 before reading anything.
* ``garbage-only``: prints lines that are not JSON-RPC and never answers.
* ``exit-mid-turn``: a normal handshake and session, then on ``session/prompt`` it
  accepts, prints garbage, writes a traceback-like line to stderr and exits 3.
* ``never-idle``: accepts prompts, reports ``running`` and then goes quiet forever.
"""

from __future__ import annotations

import json
import sys


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer(msg: dict, result: object) -> None:
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def update(kind: str, **fields: object) -> None:
    params = {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}}
    send({"jsonrpc": "2.0", "method": "session/update", "params": params})


def serve(mode: str) -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "initialize":
            answer(
                msg,
                {
                    "protocolVersion": 2,
                    "info": {"name": "broken", "version": "0"},
                    "capabilities": {"session": {}},
                },
            )
        elif method == "session/new":
            answer(msg, {"sessionId": "s1"})
        elif method == "session/prompt":
            answer(msg, {"messageId": "u1"})
            update("state_update", state="running")
            if mode == "exit-mid-turn":
                sys.stdout.write("}{ definitely not json\n")
                sys.stdout.flush()
                sys.stderr.write("Traceback: RuntimeError: model backend exploded\n")
                sys.stderr.flush()
                sys.exit(3)


def main() -> None:
    mode = sys.argv[1]
    if mode == "crash-at-start":
        sys.stderr.write("fatal: OPENAI_API_KEY is not set\n")
        sys.exit(1)
    if mode == "garbage-only":
        sys.stderr.write("starting in garbage mode\n")
        sys.stderr.flush()
        for line in sys.stdin:
            sys.stdout.write("Loading model weights... " + line[:10] + "\n")
            sys.stdout.flush()
        return
    serve(mode)


if __name__ == "__main__":
    main()
