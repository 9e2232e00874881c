"""The dedupe ledger of keyed prompts: exactly-once ``session/prompt`` (Preview).

A client sends an ``idempotencyKey`` with a prompt and the same key on every retry of it
(agentclientprotocol.com/rfds/v2/idempotency-keys). The agent inserts the user message
at most once per ``(session id, key)``: the ledger row -- the key, a digest of the
prompt, the original ``messageId`` and the encoded response -- is written by
:class:`acp2.store.sqlite.HistoryStore` (:mod:`acp2.store.sqlite_ledger`) or
:class:`acp2.store.postgres.PostgresStore` in the same transaction as the user message's
history row, so after a crash either both exist (a retry gets the original answer and
starts no work) or neither does (a retry inserts the prompt as new). A key sent again
with a different prompt is refused with ``-32602`` and changes nothing.

Retention is bounded per session: the newest :data:`KEYS_PER_SESSION` keys are kept (and
up to a tenth more between two cuts, :func:`trim_interval`); an older key is forgotten,
and a retry that late is inserted as a new prompt. Deleting a session drops its keys.
"""

from __future__ import annotations

import hashlib

from acp2.errors import InvalidParams
from acp2.schema.codec import encode
from acp2.store.base import KEYS_PER_SESSION, PromptEntry, trim_interval

__all__ = ["KEYS_PER_SESSION", "PromptEntry", "check_same_prompt", "prompt_digest", "trim_interval"]


def prompt_digest(prompt: object) -> str:
    """A digest of a prompt's content blocks (their encoded JSON): equal prompts give
    equal digests, so a retry is told from a different prompt under the same key."""
    return hashlib.sha256(encode(prompt)).hexdigest()


def check_same_prompt(entry: PromptEntry, digest: str) -> None:
    """Raise ``-32602`` when ``digest`` is not the digest of the prompt ``entry`` was
    inserted with (the key was reused for another prompt; nothing is inserted)."""
    if entry.digest != digest:
        raise InvalidParams(
            "idempotencyKey was already used for a different prompt in this session",
            {"idempotencyKey": entry.key, "messageId": entry.message_id},
        )
