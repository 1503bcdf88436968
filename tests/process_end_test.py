from __future__ import annotations

import signal

import pytest

from mlsmoke.process_end import crash_advice, crash_signal, how_it_ended


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (0, "exited with code 0"),
        (3, "exited with code 3"),
        (-signal.SIGSEGV, "was killed by SIGSEGV (a segmentation fault)"),
        (-signal.SIGBUS, "was killed by SIGBUS (a bus error)"),
        (-signal.SIGABRT, "was killed by SIGABRT (an abort)"),
        (-signal.SIGKILL, "was killed by SIGKILL"),
        (-signal.SIGTERM, "was killed by SIGTERM"),
        (-200, "was killed by signal 200"),
    ],
)
def test_how_it_ended(code, said):
    assert how_it_ended(code) == said


@pytest.mark.parametrize(
    ("code", "crash"),
    [(-signal.SIGSEGV, signal.SIGSEGV), (-signal.SIGFPE, signal.SIGFPE),
     (-signal.SIGKILL, None), (signal.SIGSEGV, None), (139, None), (0, None)],
)  # fmt: skip
def test_only_a_signal_of_the_process_own_fault_is_a_crash(code, crash):
    assert crash_signal(code) == crash


def test_a_forked_job_is_sent_to_a_process_of_its_own():
    advice = crash_advice("mlsmoke overfit --gate smoke", forked=True)
    assert "`MLSMOKE_WORKER=0 mlsmoke overfit --gate smoke`" in advice[0]
    assert "PYTHONFAULTHANDLER=1" in advice[1]


def test_a_crash_in_a_process_of_its_own_is_the_project_s_or_a_library_s():
    (advice,) = crash_advice("mlsmoke overfit", forked=False, stack_shown=True)
    assert "process of its own" in advice and "MLSMOKE_WORKER" not in advice
