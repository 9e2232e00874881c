"""Make the agent-runtime test harness (``tests/agent/agent_harness.py``) importable here."""

from __future__ import annotations

import sys
from pathlib import Path

_AGENT_TESTS = str(Path(__file__).resolve().parent.parent / "agent")
if _AGENT_TESTS not in sys.path:
    sys.path.insert(0, _AGENT_TESTS)
