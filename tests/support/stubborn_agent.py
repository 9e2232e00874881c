"""An agent that ignores end of input, and SIGTERM unless ``--term-ok`` is given.

It writes "ready" to stdout once its signal disposition is set, then reads stdin to EOF
and sleeps forever, so only a signal ends it.
"""

from __future__ import annotations

import os
import signal
import sys
import time

if "--term-ok" not in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.write(1, b"ready\n")
while os.read(0, 65536):
    pass
while True:
    time.sleep(60)
