"""Micro-benchmark of the client's streaming hot path, in process: decode one
``session/update`` params object and hand it to ``ClientSession.deliver`` (what the
connection's reader calls), with one accepted :class:`~acp2.client.work.Work` recording
(nobody iterating).

``python bench/client_receive.py [--updates N] [--repeat R]`` prints the best of ``R``
runs in microseconds per update. It imports acp2 from ``PYTHONPATH`` (or the installed
package), so the same file measures another checkout:
``PYTHONPATH=/tmp/old/src python bench/client_receive.py``. Alternate runs of the two
checkouts on a shared machine; the figure is far less noisy than the stream benchmark.
(Checkouts before the ``ClientCore`` split fed ``ClientSession._receive`` instead.)
"""

from __future__ import annotations

import argparse
import gc
import json
import time

import msgspec

from acp2.client.core import ClientCore, _UpdateNotification
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
    link: ClientCore[ClientSession] = ClientCore(None, None)  # type: ignore[arg-type]
    session = ClientSession(None, link, "s1", "/tmp")  # type: ignore[arg-type]
    link.attach(session)
    work = Work(session, session._wait_change)
    session._works.append(work)  # as prompt() does, without the round trip
    work.accept(None)
    decode = msgspec.json.Decoder(_UpdateNotification).decode
    deliver = session.deliver
    gc.collect()
    start = time.perf_counter()
    for body in bodies:
        deliver(decode(body).update, body)
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
