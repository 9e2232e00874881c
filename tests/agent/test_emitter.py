"""The emitter's hand-over to a sink in this process that takes updates as objects.

``record_frame`` encodes an update into its frame (for history now, the wire later);
``send_frame`` sends it. A sink with ``send_update_nowait`` (the in-process front
bridge) gets the recorded update itself with that frame, never the frame to decode.
"""

from __future__ import annotations

from typing import Any

from acp2.agent.emitter import MAX_RECORDED, Emitter
from acp2.schema import TextContent, UserMessage


class _Frames:
    """A sink that takes frames only."""

    congested = False

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_frame_nowait(self, frame: bytes) -> None:
        self.frames.append(frame)

    async def drain(self) -> None:
        pass


class _Objects(_Frames):
    """A sink that takes emitted updates as objects too."""

    def __init__(self) -> None:
        super().__init__()
        self.updates: list[tuple[str, Any, bytes]] = []

    def send_update_nowait(self, session_id: str, update: Any, frame: bytes) -> None:
        self.updates.append((session_id, update, frame))


def _user(n: int) -> UserMessage:
    return UserMessage(message_id=f"u{n}", content=[TextContent(text=f"prompt {n}")])


def test_a_recorded_update_reaches_a_sink_that_takes_objects_as_the_object() -> None:
    sink = _Objects()
    emitter = Emitter("s", sink, None)
    user = _user(1)
    frame = emitter.record_frame(user)
    emitter.send_frame(frame)
    emitter.send_frame(frame)  # sent again: nothing is kept for it any more

    assert sink.updates == [("s", user, frame)]
    assert sink.updates[0][1] is user
    assert sink.frames == [frame]


def test_a_sink_of_frames_gets_the_recorded_frame() -> None:
    sink = _Frames()
    emitter = Emitter("s", sink, None)
    frame = emitter.record_frame(_user(1))
    emitter.send_frame(frame)

    assert sink.frames == [frame]


def test_recorded_updates_never_sent_are_kept_boundedly_the_oldest_then_goes_as_a_frame() -> None:
    sink = _Objects()
    emitter = Emitter("s", sink, None)
    frames = [emitter.record_frame(_user(n)) for n in range(MAX_RECORDED + 1)]
    for frame in frames:
        emitter.send_frame(frame)

    assert sink.frames == frames[:1]
    assert [u.message_id for _, u, _ in sink.updates] == [
        f"u{n}" for n in range(1, MAX_RECORDED + 1)
    ]
