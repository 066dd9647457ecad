"""Staging tree only (benchmarks/mutation/run.sh copies it to rl4vlm_gym/_mutmut_caller.py): the code
object of the function that assigned VLMEnv's own state, past mutmut's trampoline frames.

``core._OwnState.__set__`` asks for ``sys._getframe(1).f_code``; under mutmut every function runs
through a trampoline (mutmut/mutation/trampoline.py), so frame 1 of the function's body is the
trampoline's. run.sh replaces that expression by :func:`caller_code`, which skips those frames, so
the run-time guard keeps its power under mutation testing.
"""

from __future__ import annotations

import sys
from types import CodeType


def caller_code() -> CodeType:
    frame = sys._getframe(2)  # 0: here, 1: the (mutated) __set__/__delete__ body
    while frame.f_back is not None and frame.f_code.co_filename.endswith(("mutmut/mutation/trampoline.py",)):
        frame = frame.f_back
    return frame.f_code
