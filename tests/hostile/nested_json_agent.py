"""A hostile ACP agent that nests JSON deeper than any decoder follows (run as a script).

``python nested_json_agent.py DEPTH``: a normal handshake and ``session/new``; every
``session/prompt`` is accepted, then the agent sends, in order: a ``session/update``
whose ``_meta`` is ``DEPTH`` nested arrays, one whose whole ``update`` is, a bare line of
``DEPTH`` nested arrays, an ``agent_message_chunk`` with the prompt's text, and ``idle``.
A prompt whose text is ``deep-response`` gets a response nested ``DEPTH`` deep instead.
"""

from __future__ import annotations

import json
import sys


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def answer(msg: dict, result: object) -> None:
    send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))


def update(body: str) -> None:
    head = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
    send(head + body + "}}")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def prompt(msg: dict, depth: int) -> None:
    text = msg["params"]["prompt"][0]["text"]
    if text == "deep-response":
        send('{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]) + ',"result":' + nested(depth) + "}")
        return
    user = f"u{msg['id']}"
    answer(msg, {"messageId": user})
    update(json.dumps({"sessionUpdate": "user_message", "messageId": user, "content": []}))
    update('{"sessionUpdate":"state_update","state":"running"}')
    update('{"sessionUpdate":"session_info_update","_meta":{"x":' + nested(depth) + "}}")
    update(nested(depth))
    send(nested(depth))
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": f"a{msg['id']}"}
    update(json.dumps({**chunk, "content": {"type": "text", "text": text}}))
    update('{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}')


def main() -> None:
    depth = int(sys.argv[1])
    for line in sys.stdin:
        msg = json.loads(line)
        if not isinstance(msg, dict):
            continue  # the client's reply to a bare nested array (a batch of one bad entry)
        method = msg.get("method")
        if method == "initialize":
            info = {"name": "nested", "version": "0"}
            answer(msg, {"protocolVersion": 2, "info": info, "capabilities": {"session": {}}})
        elif method == "session/new":
            answer(msg, {"sessionId": "s1"})
        elif method == "session/prompt":
            prompt(msg, depth)


if __name__ == "__main__":
    main()
