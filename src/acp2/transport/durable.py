"""Durable streams, sans-IO: numbered messages kept until acknowledged, resent after a
reconnect, duplicates dropped on arrival.

The remote transport RFD ("Streamable HTTP & WebSocket Transport") leaves resumption to v2
and no published draft fixes a wire for it, so acp2 defines one, in ``Acp2-`` headers and
envelope fields that no ACP message uses (docs/remote.md, "Durable streams"):

* Each direction of a durable link numbers its messages 1, 2, 3, ... (the *seq*). The
  sender keeps every message in a :class:`Retained` window until the other side
  acknowledges it; the receiver keeps the last seq it took in a :class:`Received` and drops
  anything at or below it (a resend after a reconnect).
* On a WebSocket a durable link carries envelopes (:func:`encode_data`,
  :func:`encode_ack`, :func:`decode_frame`): ``{"seq":N,"msg":<the JSON-RPC message>}`` and
  ``{"ack":N}``. A WebSocket client that asks with ``Acp2-Batch: 1`` on the upgrade, and
  is granted it (the 101 repeats the header), may also get batch frames
  (:func:`encode_batch`): ``{"seq":N,"msgs":[m1,...,mk]}`` carries k >= 1 messages whose
  seqs are N, N+1, ..., N+k-1 (``seq`` is the first). Each message keeps its own seq:
  duplicates are dropped, acknowledgements and resends count per message, and a resend may
  cut the same messages into other batches.
* Over SSE the seq is the event ``id:``; a POST carries its own seq in the
  ``Acp2-Seq`` header, and the client acknowledges the events it took with a bodiless
  POST carrying ``Acp2-Ack`` (the stream is the one its ``Acp-Session-Id`` names, or the
  connection's); reopening with ``Last-Event-ID`` acknowledges too.
* A reconnecting side says the last seq it received (``Acp2-Last-Seq`` /
  ``Last-Event-ID``); the other side resends :meth:`Retained.after` that seq. When the window
  no longer holds the next message (:class:`CursorTooOld`), the link cannot be resumed and
  the client falls back to ``session/resume`` with replay, which the session history serves.

Retention is bounded by count and by age (:class:`Retention`); both are advertised to the
client so it knows how long a drop it can ride out.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, repeat
from typing import Final

import msgspec

from acp2.errors import CursorTooOld, InvalidRequest, SeqGap
from acp2.errors import DurableFrameError as FrameError
from acp2.rpc.guarded import decode
from acp2.rpc.messages import TOO_DEEP

__all__ = [
    "ACK_EVERY",
    "ACK_HEADER",
    "BATCH_BYTES",
    "BATCH_HEADER",
    "BATCH_MAX",
    "BATCH_MESSAGES",
    "DURABLE_HEADER",
    "LAST_SEQ_HEADER",
    "MAX_SEQ_DIGITS",
    "SEQ_HEADER",
    "CursorTooOld",
    "Frame",
    "FrameError",
    "Received",
    "Retained",
    "Retention",
    "SeqGap",
    "batches",
    "decode_frame",
    "encode_ack",
    "encode_batch",
    "encode_data",
    "header_seq",
]

#: Request header asking for a durable link (value ``1``); the answer repeats it with the
#: retention (``messages=N; seconds=S``) when the server grants it.
DURABLE_HEADER = "acp2-durable"
#: Header carrying the last seq a reconnecting side received from the other.
LAST_SEQ_HEADER = "acp2-last-seq"
#: Header carrying the seq of the message in a POST body.
SEQ_HEADER = "acp2-seq"
#: Header of a bodiless POST acknowledging every SSE event up to its value (Streamable HTTP).
ACK_HEADER = "acp2-ack"
#: A receiver acknowledges at least every this many messages (and when the link goes
#: quiet), unless it acknowledges on a timer instead (:class:`Received`'s ``ack_every``).
ACK_EVERY = 64
#: WebSocket upgrade header asking for (value ``1``) and granting (the 101 repeats it)
#: batch frames from the server: several messages per frame, far fewer frames to parse.
BATCH_HEADER = "acp2-batch"
#: The most messages a sender puts in one batch frame (:func:`batches`).
BATCH_MESSAGES = 64
#: The most message bytes a sender puts in one batch frame, unless a single message is
#: bigger (it then goes alone): a frame is at most max(this, one message) plus the envelope.
BATCH_BYTES = 256 * 1024
#: The most messages a receiver accepts in one batch frame (:func:`decode_frame`).
BATCH_MAX = 1024
#: The most digits of a seq header (:func:`header_seq`): a signed 64-bit integer's.
MAX_SEQ_DIGITS = 19
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Retention:
    """How much a sender keeps for resends: at most ``messages`` messages, each for at most
    ``seconds`` seconds after it was sent. ``header()`` renders it for the answer header."""

    messages: int = 10_000
    seconds: float = 300.0

    def header(self) -> str:
        """The retention as ``messages=N; seconds=S`` (seconds rounded down)."""
        return f"messages={self.messages}; seconds={int(self.seconds)}"

    @classmethod
    def parse(cls, value: str) -> Retention:
        """Read :meth:`header`'s format back; missing or bad parts keep the defaults."""
        parts: dict[str, str] = {}
        for item in value.split(";"):
            key, _, raw = item.strip().partition("=")
            parts[key.strip()] = raw.strip()
        default = cls()
        return cls(
            messages=_int(parts.get("messages"), default.messages),
            seconds=float(_int(parts.get("seconds"), int(default.seconds))),
        )


def _int(text: str | None, default: int) -> int:
    try:
        return max(1, int(text)) if text is not None else default
    except ValueError:
        return default


class Retained:
    """The sending side of one direction: assigns seqs, keeps what is not yet acknowledged.

    Messages past the count bound or older than the age bound are dropped from the window
    even when unacknowledged: a peer that stays away that long resumes through the session
    history instead (:class:`CursorTooOld`). ``clock`` is injectable for tests.
    :attr:`held_bytes` is the size of the messages kept, exact after every call.
    """

    __slots__ = ("_added", "_clock", "_gone", "_items", "acked", "last", "retention")

    def __init__(
        self, retention: Retention | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.retention = retention or Retention()
        self._clock = clock
        # (seq, sent at, message, bytes added up to and including it): the running total
        # makes the kept size one subtraction however many messages an ack forgets.
        self._items: deque[tuple[int, float, bytes, int]] = deque()
        self._added = 0  # bytes of every message ever added
        self._gone = 0  # bytes of every message dropped (acknowledged or trimmed)
        #: The seq of the newest message added (0: none yet).
        self.last = 0
        #: The highest seq the peer acknowledged.
        self.acked = 0

    @property
    def held_bytes(self) -> int:
        """The total size of the messages kept."""
        return self._added - self._gone

    def add(self, message: bytes) -> int:
        """Keep ``message`` under the next seq and return that seq."""
        self.last += 1
        self._added += len(message)
        self._items.append((self.last, self._clock(), message, self._added))
        self._trim()
        return self.last

    def extend(self, messages: list[bytes]) -> int:
        """Keep ``messages`` under the next seqs, in order (as many :meth:`add` calls, with
        one clock reading and one trim); return the seq of the first."""
        first = self.last + 1
        if not messages:
            return first
        totals = list(accumulate(map(len, messages), initial=self._added))
        seqs = range(first, first + len(messages))
        self._items.extend(zip(seqs, repeat(self._clock()), messages, totals[1:]))
        self.last += len(messages)
        self._added = totals[-1]
        self._trim()
        return first

    def ack(self, upto: int) -> None:
        """Forget every message with seq ``<= upto`` (values above :attr:`last` are capped)."""
        upto = min(upto, self.last)
        if upto <= self.acked:
            return
        self.acked = upto
        items = self._items
        if items and items[0][0] <= upto:
            self._drop(upto - items[0][0] + 1)

    def shed(self, max_bytes: int) -> None:
        """Forget the oldest messages until at most ``max_bytes`` are kept, as if the peer
        acknowledged them (a window that must stay bounded without acknowledgements)."""
        excess = self.held_bytes - max_bytes
        if excess <= 0:
            return
        horizon = self._gone + excess
        upto = next(seq for seq, _, _, total in self._items if total >= horizon)
        self.ack(upto)

    def after(self, seq: int) -> list[tuple[int, bytes]]:
        """Every kept message with seq ``> seq``, in order, for a resend.

        ``seq`` is what the peer says it received last; it also acknowledges everything up
        to it. Raises :class:`CursorTooOld` when a message after ``seq`` is no longer kept,
        and :class:`ValueError` when ``seq`` is negative or beyond :attr:`last` (the peer
        claims messages that were never sent).
        """
        if seq < 0 or seq > self.last:
            raise ValueError(f"seq {seq} outside 0..{self.last}")
        self.ack(seq)
        self._trim()
        items = self._items
        first = items[0][0] if items else self.last + 1
        if first > seq + 1:
            raise CursorTooOld(f"messages after {seq} are no longer kept (oldest is {first})")
        return [(s, m) for s, _, m, _ in items if s > seq]

    def pending(self) -> int:
        """How many messages are kept (sent, not acknowledged, not expired)."""
        return len(self._items)

    def _trim(self) -> None:
        items = self._items
        excess = len(items) - self.retention.messages
        if excess > 0:
            self._drop(excess)
        horizon = self._clock() - self.retention.seconds
        if items and items[0][1] < horizon:
            # Seqs are consecutive and sent-at times ascend: find the cut by bisection.
            self._drop(bisect_left(items, horizon, key=_sent_at))

    def _drop(self, count: int) -> None:
        """Forget the ``count`` oldest messages (0 < count <= kept)."""
        items = self._items
        if count >= len(items):
            self._gone = items[-1][3]
            items.clear()
            return
        self._gone = items[count - 1][3]
        for _ in range(count):
            items.popleft()


def _sent_at(item: tuple[int, float, bytes, int]) -> float:
    return item[1]


class Received:
    """The receiving side of one direction: the last seq taken, and when to acknowledge.

    ``ack_every`` (default :data:`ACK_EVERY`) is how many messages may arrive before an
    acknowledgement is due however fast they come; a receiver that also acknowledges on
    a timer (the WebSocket client) sets it higher, but must keep it well below the
    sender's retention count so nothing unacknowledged is ever trimmed.
    """

    __slots__ = ("_every", "_unacked", "last")

    def __init__(self, ack_every: int = ACK_EVERY) -> None:
        #: The seq of the last message taken (0: none yet).
        self.last = 0
        self._unacked = 0
        self._every = max(1, ack_every)

    def accept(self, seq: int) -> bool:
        """True when ``seq`` is the next message (take it), False for a duplicate (drop it).

        Raises :class:`SeqGap` when ``seq`` skips ahead: a message was lost, which a durable
        link must not hide.
        """
        if seq <= self.last:
            return False
        if seq != self.last + 1:
            raise SeqGap(f"expected seq {self.last + 1}, got {seq}")
        self.last = seq
        self._unacked += 1
        return True

    def accept_batch(self, first: int, count: int) -> int:
        """Take the messages ``first .. first+count-1``; return how many of them, from the
        front, are duplicates (drop those, take the rest). A batch may straddle
        :attr:`last` (a resend cut differently). Raises :class:`SeqGap` when ``first``
        skips ahead, as :meth:`accept` does."""
        if first > self.last + 1:
            raise SeqGap(f"expected seq {self.last + 1}, got {first}")
        end = first + count - 1
        skip = min(count, self.last - first + 1)
        if end > self.last:
            self._unacked += end - self.last
            self.last = end
        return skip

    def ack_due(self) -> bool:
        """True once ``ack_every`` messages arrived since the last :meth:`acked`."""
        return self._unacked >= self._every

    def acked(self) -> int:
        """Note that an acknowledgement is being sent; return the seq it carries."""
        self._unacked = 0
        return self.last


class Frame(msgspec.Struct, frozen=True, omit_defaults=True):
    """One durable WebSocket frame: data (``seq`` + ``msg``), a batch (``seq`` of the first
    message + ``msgs``) or an acknowledgement (``ack``)."""

    seq: int | None = None
    #: The message bytes; empty when absent (msgspec cannot put Raw in a union).
    msg: msgspec.Raw = msgspec.Raw(b"")
    #: A batch's messages, in seq order; ``None`` for the other shapes.
    msgs: list[msgspec.Raw] | None = None
    ack: int | None = None

    def messages(self) -> list[bytes]:
        """A data or batch frame's messages as bytes, in seq order (the first is ``seq``)."""
        if self.msgs is None:
            return [bytes(self.msg)]
        return [bytes(m) for m in self.msgs]


_decoder = msgspec.json.Decoder(Frame)


def encode_data(seq: int, message: bytes) -> bytes:
    """The data frame carrying ``message`` (one JSON-RPC message, JSON bytes) as ``seq``."""
    return b'{"seq":%d,"msg":%s}' % (seq, message.strip())


def encode_batch(first: int, messages: list[bytes]) -> bytes:
    """The batch frame carrying ``messages`` (JSON bytes each) as seqs ``first``, ``first+1``..."""
    return b'{"seq":%d,"msgs":[%s]}' % (first, b",".join(map(bytes.strip, messages)))


def batches(
    items: list[tuple[int, bytes]],
    max_count: int = BATCH_MESSAGES,
    max_bytes: int = BATCH_BYTES,
) -> list[bytes]:
    """The frames that carry ``items`` ((seq, message) pairs, oldest first): runs of
    consecutive seqs cut at ``max_count`` messages or ``max_bytes`` message bytes, a run
    of one as a plain data frame. Nothing waits for more: this frames what is given."""
    if items and items[-1][0] - items[0][0] == len(items) - 1:
        return _consecutive(items, max_count, max_bytes)
    return _runs(items, max_count, max_bytes)


def _consecutive(items: list[tuple[int, bytes]], max_count: int, max_bytes: int) -> list[bytes]:
    """:func:`batches` of items whose seqs are all consecutive (what an outlet queues):
    whole chunks of ``max_count`` at a time, cut finer only where one is too big."""
    frames: list[bytes] = []
    for start in range(0, len(items), max_count):
        chunk = items[start : start + max_count]
        messages = [message for _, message in chunk]
        if sum(map(len, messages)) <= max_bytes:
            frames.append(_frame(chunk[0][0], messages))
        else:
            frames.extend(_runs(chunk, max_count, max_bytes))
    return frames


def _runs(items: list[tuple[int, bytes]], max_count: int, max_bytes: int) -> list[bytes]:
    frames: list[bytes] = []
    run: list[bytes] = []
    first = size = 0
    for seq, message in items:
        if run and (
            len(run) >= max_count or size + len(message) > max_bytes or seq != first + len(run)
        ):
            frames.append(_frame(first, run))
            run = []
        if not run:
            first, size = seq, 0
        run.append(message)
        size += len(message)
    if run:
        frames.append(_frame(first, run))
    return frames


def _frame(first: int, run: list[bytes]) -> bytes:
    return encode_data(first, run[0]) if len(run) == 1 else encode_batch(first, run)


def header_seq(value: str | None) -> int | None:
    """A seq sent as a header (``Last-Event-ID``, ``Acp2-Ack``, ``Acp2-Seq``): 1 to
    :data:`MAX_SEQ_DIGITS` ASCII digits with a value that fits a signed 64-bit integer,
    else None (``int()`` would take signs, spaces and other scripts' digits, fail on
    some characters ``str.isdigit`` accepts, such as superscripts, and raise past 4,300
    digits)."""
    if value is None or len(value) > MAX_SEQ_DIGITS:
        return None
    if not (value.isascii() and value.isdigit()):
        return None
    seq = int(value)
    return seq if seq <= _INT64_MAX else None


def encode_ack(seq: int) -> bytes:
    """The frame acknowledging every message up to ``seq``."""
    return b'{"ack":%d}' % seq


# The data frame's layout as encode_data writes it: a message nested too deeply to decode
# still has a readable seq, so the receiving rpc layer can answer it alone.
_DATA_LAYOUT: Final = re.compile(rb'\{"seq":([1-9][0-9]{0,18}),"msg":(.+)\}', re.DOTALL)


def _too_deep_data(data: bytes | str, exc: InvalidRequest) -> Frame:
    """The data frame ``data`` whose message msgspec could not follow, read from its
    layout; :class:`FrameError` for any other frame that did not decode."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    match = _DATA_LAYOUT.fullmatch(raw.strip()) if exc.message.endswith(TOO_DEEP) else None
    if match is None:
        raise FrameError(f"not a durable frame: {exc.message}")
    return Frame(seq=int(match[1]), msg=msgspec.Raw(match[2]))


def decode_frame(data: bytes | str) -> Frame:
    """Decode a durable frame; raises :class:`FrameError` for anything else.

    A data frame has a positive ``seq`` and a ``msg`` (any JSON value: the JSON-RPC layer
    judges it), and no ``ack``; a batch has a positive ``seq`` and ``msgs``, a list of 1 to
    :data:`BATCH_MAX` messages, and nothing else; an acknowledgement has a non-negative
    ``ack`` only. A data frame laid out as :func:`encode_data` writes it whose message is
    nested too deeply to decode is still taken, so that the JSON-RPC layer answers that
    message alone; any other frame that does not decode (nesting included) is refused.
    """
    try:
        frame = decode(_decoder, data)
    except InvalidRequest as exc:
        frame = _too_deep_data(data, exc)
    if frame.ack is not None:
        if frame.seq is not None or len(frame.msg) or frame.msgs is not None or frame.ack < 0:
            raise FrameError("an ack frame carries a non-negative ack only")
        return frame
    if frame.seq is None or frame.seq < 1:
        raise FrameError("a data frame carries a positive seq")
    if frame.msgs is None:
        if not len(frame.msg):
            raise FrameError("a data frame carries a msg")
    elif len(frame.msg) or not 1 <= len(frame.msgs) <= BATCH_MAX:
        raise FrameError(f"a batch frame carries 1 to {BATCH_MAX} msgs and no msg")
    return frame
