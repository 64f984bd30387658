"""A hold for the crash tests alone: a re-rate job that parks at a named point of its run,
so that a kill -9 finds it there however fast the job is (tests/integration/test_crash.py).

The tests set SYNELO_TEST_HOLD to "KIND PHASE FIFO" (a job's kind, one of its phases, the
path of a FIFO the test reads): a job of that kind, at the end of that phase's work, writes
"KIND PHASE" to the FIFO and waits there. Nothing sets it in production, where each point
costs one look-up in the environment.
"""

from __future__ import annotations

import os
import time

HOLD_ENV = "SYNELO_TEST_HOLD"
HOLD_S = 60.0  # then the job goes on: a test that never kills it must not hang it forever


def hold_point(kind: str, phase: str) -> None:
    """Park here if SYNELO_TEST_HOLD names this job kind and phase (see the module)."""
    setting = os.environ.get(HOLD_ENV)
    if setting is None:
        return
    held_kind, held_phase, fifo = setting.split(" ", 2)
    if (held_kind, held_phase) != (kind, phase):
        return
    with open(fifo, "w") as out:  # the test holds the FIFO open for reading: at once
        out.write(f"{kind} {phase}\n")
    time.sleep(HOLD_S)
