"""`python -m local.die_with_parent PARENT_PID COMMAND...`: run COMMAND so that it dies when PARENT_PID does.

`make run` starts `chalice local` in a session of its own, so that Ctrl-C reaches local/run.py only and
it stops chalice in order. Then nothing else stops chalice when local/run.py is killed: it would stay,
an orphan holding the port. On Linux the kernel sends it SIGKILL when its parent dies
(prctl PR_SET_PDEATHSIG, which survives the exec); elsewhere the command runs unguarded.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is not None:
        if prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the parent died before the guard was in place
            sys.exit(1)
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
