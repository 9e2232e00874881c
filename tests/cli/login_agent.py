"""An ACP v2 agent that needs a terminal login (AU-05, AU-06), for ``acp2 chat`` tests.

Until the marker file ``$ACP2_LOGIN_MARKER`` exists it answers ``initialize`` itself --
advertising a terminal method (``--login``, ``ACP2_LOGIN_TOKEN=t0ken``) only when the
client sent ``capabilities.auth.terminal`` -- and refuses ``session/new`` with -32000.
Run as ``login_agent.py --login`` it is the login: it checks the variable, writes the
marker, prints ``login done`` and exits 0 (``--login`` with ``ACP2_LOGIN_FAIL=1``: exit 1).
Once logged in it becomes ``acp2 test-agent``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

MARKER = Path(os.environ["ACP2_LOGIN_MARKER"])
METHOD = {
    "type": "terminal",
    "methodId": "terminal-login",
    "name": "Log in in a terminal",
    "args": ["--login"],
    "env": [{"name": "ACP2_LOGIN_TOKEN", "value": "t0ken"}],
}


def login() -> int:
    if os.environ.get("ACP2_LOGIN_FAIL") == "1" or os.environ.get("ACP2_LOGIN_TOKEN") != "t0ken":
        print("login failed")
        return 1
    MARKER.write_text("ok")
    print("login done")
    return 0


def answer(message: dict[str, object], result: object = None, error: object = None) -> None:
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    reply |= {"error": error} if error is not None else {"result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def serve_logged_out() -> None:
    for raw in sys.stdin:
        message = json.loads(raw)
        method = message.get("method")
        if method == "initialize":
            caps = message["params"].get("capabilities") or {}
            terminal = (caps.get("auth") or {}).get("terminal") is not None
            answer(
                message,
                {
                    "protocolVersion": 2,
                    "info": {"name": "login-agent", "version": "1.0"},
                    "capabilities": {"session": {}},
                    "authMethods": [METHOD] if terminal else [],
                },
            )
        elif "id" in message:
            answer(message, error={"code": -32000, "message": "Authentication required"})


if __name__ == "__main__":
    if sys.argv[1:] == ["--login"]:
        sys.exit(login())
    if MARKER.exists():
        os.execv(sys.executable, [sys.executable, "-m", "acp2", "test-agent"])
    serve_logged_out()
