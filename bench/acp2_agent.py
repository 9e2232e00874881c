"""The acp2 bench agent: the bench peer contract of ``_common.py`` on ``acp2.agent``.

HOOK (coordinator): this is the agent side of every acp2 benchmark. It is written against
``docs/writing-an-agent.md``: ``Agent(...)``, ``@agent.prompt`` with ``await
turn.say(text)`` per chunk, ``@agent.ext_method("_bench/...")``, ``agent.history()`` (the
SQLite ``HistoryStore``) and ``agent.run()`` on stdio. Adjust it here if those change.

``python acp2_agent.py --store PATH|:memory: [--timeline]``

``--timeline`` records the prompt path's stage timestamps (``_timeline.py``) and serves
them with ``_bench/timeline`` (the events since the last call, as ``[stage, ns]`` pairs).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from _common import (
    SESSION_CWD,
    chunk_text,
    parse_stream_prompt,
    self_stats,
    trace_report,
    trace_start,
)
from acp2.agent import Agent, Turn


def decode_params(params: Any) -> dict[str, Any]:
    """Return extension-request params as a dict (they arrive as raw JSON bytes or None)."""
    if params is None:
        return {}
    if isinstance(params, dict):
        return params
    decoded = json.loads(bytes(params))
    return decoded if isinstance(decoded, dict) else {}


def stored_update(i: int) -> bytes:
    """Return stored update ``i`` of a seeded conversation: alternating whole messages."""
    kind = "user_message" if i % 2 == 0 else "agent_message"
    update = {
        "sessionUpdate": kind,
        "messageId": f"msg_{i}",
        "content": [{"type": "text", "text": f"stored message {i}"}],
    }
    return json.dumps(update, separators=(",", ":")).encode()


def build(store: str) -> Agent:
    """Return the bench agent with its history in ``store``."""
    agent = Agent("acp2-bench-agent", version="0", store=store)

    @agent.prompt
    async def stream(turn: Turn) -> str:
        for i in range(parse_stream_prompt(turn.text)):
            await turn.say(chunk_text(i))
        return "end_turn"

    @agent.ext_method("_bench/ping")
    async def ping(params: Any) -> dict[str, Any]:
        return {}

    @agent.ext_method("_bench/stats")
    async def stats(params: Any) -> dict[str, float]:
        return self_stats(bool(decode_params(params).get("gc")))

    @agent.ext_method("_bench/trace")
    async def trace(params: Any) -> dict[str, Any]:
        args = decode_params(params)
        if args.get("start"):
            trace_start()
            return {}
        return trace_report(int(args["count"]))

    @agent.ext_method("_bench/timeline")
    async def timeline(params: Any) -> list[tuple[str, int]]:
        import _timeline

        return _timeline.drain()

    @agent.ext_method("_bench/seed")
    async def seed(params: Any) -> dict[str, Any]:
        args = decode_params(params)
        history = agent.history()
        session_id = str(args["sessionId"])
        history.create_session(session_id, str(args.get("cwd", SESSION_CWD)), [])
        for i in range(int(args["count"])):
            history.append(session_id, stored_update(i))
        history.flush()
        return {}

    return agent


def main() -> None:
    """Serve the bench agent on stdio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default=":memory:")
    parser.add_argument("--timeline", action="store_true", help="record stage timestamps")
    args = parser.parse_args()
    if args.timeline:
        import _timeline

        _timeline.install_agent()
    build(args.store).run()


if __name__ == "__main__":
    main()
