"""Micro-benchmark of the client's streaming hot path, in process: decode one
``session/update`` params object and ``ClientSession._receive`` it, with one accepted
:class:`~acp2.client.work.Work` recording (nobody iterating).

``python bench/client_receive.py [--updates N] [--repeat R]`` prints the best of ``R``
runs in microseconds per update. It imports acp2 from ``PYTHONPATH`` (or the installed
package), so the same file measures another checkout:
``PYTHONPATH=/tmp/old/src python bench/client_receive.py``. Alternate runs of the two
checkouts on a shared machine; the figure is far less noisy than the stream benchmark.
"""

from __future__ import annotations

import argparse
import gc
import json
import time

import msgspec

from acp2.client.connection import _UpdateNotification
from acp2.client.session import ClientSession
from acp2.client.work import Work


def params(i: int) -> bytes:
    """One ``agent_message_chunk`` params object, as the reader hands it to the client."""
    update = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": f"tok{i} "},
    }
    return json.dumps({"sessionId": "s1", "update": update}, separators=(",", ":")).encode()


def run(bodies: list[bytes]) -> float:
    """Seconds to decode and receive ``bodies`` into a fresh session with one work."""
    session = ClientSession(None, "s1", "/tmp")  # type: ignore[arg-type]
    work = Work(session)
    session._works.append(work)
    work._accept(None)
    decode = msgspec.json.Decoder(_UpdateNotification).decode
    receive = session._receive
    gc.collect()
    start = time.perf_counter()
    for body in bodies:
        receive(decode(body).update, b"")
    return time.perf_counter() - start


def main() -> None:
    """Parse the arguments, run, print the best figure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    bodies = [params(i) for i in range(args.updates)]
    best = min(run(bodies) for _ in range(args.repeat))
    print(f"{best / args.updates * 1e6:.3f} us/update")


if __name__ == "__main__":
    main()
