"""How a process that ran the project's code ended without giving its answer: the
exit code, or the signal that killed it, said the same way by every hook. A crash
(SIGSEGV and its kind) is said as a crash, with what to do about it: Python code
cannot cause one by itself, so it comes from native code (torch, a compiled
extension, the project's own C/C++), or from the process's environment.
"""

from __future__ import annotations

import signal

from mlsmoke.signals import signal_name

# What a user reads for each crash signal; the kernel or the C library sends these
# to a process for its own fault, not another process (as SIGKILL or SIGTERM).
CRASHES = {
    signal.SIGSEGV: "a segmentation fault",
    signal.SIGBUS: "a bus error",
    signal.SIGILL: "an illegal instruction",
    signal.SIGFPE: "a floating-point exception",
    signal.SIGABRT: "an abort",
}


def crash_signal(code: int) -> int | None:
    """The crash signal of a process that ended with ``code`` (negative: killed by
    that signal, as subprocess and the warm worker say it); None for any other end."""
    return -code if code < 0 and -code in CRASHES else None


def how_it_ended(code: int) -> str:
    """``"was killed by SIGSEGV (a segmentation fault)"``, ``"was killed by
    SIGKILL"`` or ``"exited with code 1"``."""
    if code >= 0:
        return f"exited with code {code}"
    crash = crash_signal(code)
    named = f"was killed by {signal_name(-code)}"
    return f"{named} ({CRASHES[crash]})" if crash else named


def crash_advice(command: str, forked: bool, stack_shown: bool = False) -> list[str]:
    """What to do about a crash of the job ``command`` (``"mlsmoke overfit"``),
    ``forked`` by the warm worker or a process of its own; ``stack_shown``: the
    message already shows the Python stack at the crash."""
    if forked:
        advice = [
            f"run `MLSMOKE_WORKER=0 {command}`: the job then runs in a process of its"
            " own rather than forked from the warm worker; a crash there too is in the"
            " project's code or a library it calls (torch, an extension)"
        ]
    else:
        advice = [
            "it crashed in a process of its own (not the warm worker's): look for the"
            " cause in the project's code or a library it calls (torch, an extension)"
        ]
    if not stack_shown:
        advice.append(
            f"`PYTHONFAULTHANDLER=1 MLSMOKE_WORKER=0 {command}` prints the Python"
            " stack where it crashed"
        )
    return advice
