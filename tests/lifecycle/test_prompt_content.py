"""The one prompt-content rule (PL-02) the agent runtime, the client and the back bridge
share: what a prompt may hold for an agent that advertised what."""

from __future__ import annotations

import pytest

from acp2.lifecycle.prompt_content import PromptTakes, plain, refusal
from acp2.schema import (
    AudioContent,
    ImageContent,
    PromptCapabilities,
    PromptImageCapabilities,
    ResourceLink,
    TextContent,
)

TEXT = TextContent(text="hi")
LINK = ResourceLink(uri="file:///a.txt", name="a.txt")
IMAGE = ImageContent(data="aGk=", mime_type="image/png")
AUDIO = AudioContent(data="aGk=", mime_type="audio/wav")


def test_text_and_links_are_plain_and_taken_by_every_agent() -> None:
    assert plain([TEXT, LINK])
    assert refusal(PromptTakes(), [TEXT, LINK]) is None


def test_an_empty_prompt_is_not_plain_and_is_refused() -> None:
    assert not plain([])
    assert refusal(PromptTakes(), []) == "A prompt needs at least one content block"


@pytest.mark.parametrize(("block", "marker"), [(IMAGE, "image"), (AUDIO, "audio")])
def test_a_block_needs_its_marker_and_the_refusal_names_it(block: object, marker: str) -> None:
    assert not plain([TEXT, block])
    why = refusal(PromptTakes(), [TEXT, block])
    assert why is not None
    assert f"session.prompt.{marker}" in why
    assert "block 1" in why
    assert refusal(PromptTakes(**{marker: True}), [TEXT, block]) is None


def test_takes_reads_a_v2_prompt_capability_object_and_absence() -> None:
    takes = PromptTakes.of(PromptCapabilities(image=PromptImageCapabilities()))
    assert (takes.image, takes.audio, takes.embedded_context) == (True, False, False)
    assert PromptTakes.of(None) == PromptTakes()
