"""The prompt handler's side of exactly-once prompts: look a key up, remember it.

``session/prompt`` with an ``idempotencyKey`` (:mod:`acp2.store.ledger`) is looked up
twice: before it waits for the session's prompt slot (a retry of a prompt inserted
earlier -- on this connection, an earlier one, or before the agent restarted -- is
answered at once with the original response, and starts no work), and again once it
holds the slot (another attempt with the same key may have been inserted while this one
was held; then this one gives the slot back and answers the same way).

:func:`exit_after_insert_for_tests` is a test hook, not a feature: with
``ACP2_TEST_EXIT_AFTER_INSERT=1`` in its environment the agent process commits the user
message (and its key) and exits at once, before the response is written -- the crash a
retry must survive. Never set it outside tests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from msgspec import UNSET

from acp2.schema import PromptRequest, PromptResponse
from acp2.schema.codec import decode, encode
from acp2.store.ledger import PromptEntry, check_same_prompt, prompt_digest

if TYPE_CHECKING:
    from acp2.store.base import SessionStore

__all__ = ["EXIT_AFTER_INSERT", "KeyedPrompt", "exit_after_insert_for_tests"]

#: The environment variable of the test-only crash hook (see the module doc).
EXIT_AFTER_INSERT: Final = "ACP2_TEST_EXIT_AFTER_INSERT"

#: The exit status of the crash hook (tests tell it from a real failure by it).
_EXIT_STATUS: Final = 75


@dataclass(slots=True)
class KeyedPrompt:
    """One ``session/prompt`` that carries an ``idempotencyKey``."""

    store: SessionStore
    session_id: str
    key: str
    digest: str

    @classmethod
    def of(cls, store: SessionStore, params: PromptRequest) -> KeyedPrompt | None:
        """The keyed view of ``params``, or None for a prompt without a key."""
        if params.idempotency_key is UNSET:
            return None
        return cls(store, params.session_id, params.idempotency_key, prompt_digest(params.prompt))

    def earlier(self) -> PromptResponse | None:
        """The response the first attempt of this key was answered with, or None if the
        key is new (or forgotten). Raises ``-32602`` if the key came with another prompt."""
        entry = self.store.find_prompt(self.session_id, self.key)
        if entry is None:
            return None
        check_same_prompt(entry, self.digest)
        return decode(entry.response, PromptResponse)

    def remember(self, response: PromptResponse) -> None:
        """Queue the ledger entry; it is committed with the user message just appended."""
        message_id = response.message_id
        assert isinstance(message_id, str)
        entry = PromptEntry(self.session_id, self.key, self.digest, message_id, encode(response))
        self.store.remember_prompt(entry)


#: The crash hook is armed for this process (its environment is read once: a lookup per
#: prompt cost ~1 us of every prompt).
_ARMED: Final = os.environ.get(EXIT_AFTER_INSERT) == "1"


def exit_after_insert_for_tests(store: SessionStore) -> None:
    """Test hook (see the module doc): commit, then exit before the response is sent."""
    if _ARMED:
        store.flush()
        os._exit(_EXIT_STATUS)
