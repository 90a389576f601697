"""The worker's entry point, run in the sandbox:

    python -P -m gym.worker IN_DIR OUT_DIR
    python -P -m gym.worker --warm DEVICE MAX_IDLE_S IN_DIR OUT_DIR   (a warm pool's worker)

The process started here is the witness (`gym.worker.witness`): it never runs a line of the
submission, forks the submission's process (`gym.worker.submission.main`) and, once that process
and everything it started are gone, replays what the trusted side picks (`gym.worker.replayer`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from .protocol import ExitCode
from .submission import finish, main
from .witness import serve

USAGE = "usage: python -m gym.worker IN_DIR OUT_DIR | python -m gym.worker --warm DEVICE MAX_IDLE_S IN_DIR OUT_DIR"

if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--warm":
        finish(serve(Path(sys.argv[4]), Path(sys.argv[5]), main, warm=(sys.argv[2], float(sys.argv[3]))))
    if len(sys.argv) != 3:
        print(USAGE, file=sys.stderr)
        sys.exit(ExitCode.usage)
    finish(serve(Path(sys.argv[1]), Path(sys.argv[2]), main))
