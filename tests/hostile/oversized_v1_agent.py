"""A v1 agent that answers one request with a frame over the 64 MiB limit (run as a script).

``python oversized_v1_agent.py``: answers v1 ``initialize``; the request ``x/big`` gets a
response of 65 MiB (its ``id`` first, as most serializers write it); every other request
gets ``{"ok": true}``. ``acp2 bridge`` between a v1 client and this agent copies frames
unchanged, except those over the limit.
"""

from __future__ import annotations

import json
import sys

BIG = 65 * 1024 * 1024


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        rid, method = message.get("id"), message.get("method")
        if rid is None or method is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        elif method == "x/big":
            send(
                '{"jsonrpc":"2.0","id":'
                + json.dumps(rid)
                + ',"result":{"text":"'
                + "a" * BIG
                + '"}}'
            )
            continue
        else:
            result = {"ok": True}
        send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))


if __name__ == "__main__":
    main()
