"""An agent that starts a helper in its own process group, then exits at end of stdin.

The helper writes its pid and a newline to stdout (once its SIGTERM disposition is set:
ignored with ``--helper-ignores-term``) and sleeps, so the helper outlives the agent
unless whoever stops the agent stops its whole group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

if sys.argv[1:2] == ["--helper"]:
    if "--helper-ignores-term" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.write(1, f"{os.getpid()}\n".encode())
    time.sleep(60)
else:
    subprocess.Popen(
        [sys.executable, __file__, "--helper", *sys.argv[1:]], stdin=subprocess.DEVNULL
    )
    while os.read(0, 65536):
        pass
