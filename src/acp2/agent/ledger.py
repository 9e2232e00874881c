"""Moved: the idempotency ledger is :mod:`acp2.store.ledger` (beside both stores).

This name stays for one release because the 0.1 guide pointed at
``acp2.agent.ledger.KEYS_PER_SESSION``; import from :mod:`acp2.store.ledger` instead.
"""

from __future__ import annotations

from acp2.store.ledger import (
    KEYS_PER_SESSION,
    PromptEntry,
    check_same_prompt,
    prompt_digest,
    trim_interval,
)

__all__ = ["KEYS_PER_SESSION", "PromptEntry", "check_same_prompt", "prompt_digest", "trim_interval"]
