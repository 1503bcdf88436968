"""Rank faults: a gate on 2 gloo ranks whose rank 1 exits early, is killed, raises
alone or hangs ends within its limits as ``rank-failed``, with every rank's stack shown
and no rank left behind; a SIGTERM to the hook takes every rank along."""

from __future__ import annotations

import signal

import pytest

from .faultkit import Fault, assert_clean

TIMEOUT = 30
COLLECTIVE_TIMEOUT = 3
# From the fault on rank 1 to the CLI's exit: the surviving rank's wait in a
# collective (COLLECTIVE_TIMEOUT plus 1 s), the stacks, and room for a loaded 2-core
# machine; well inside the gate's own TIMEOUT.
BOUND = COLLECTIVE_TIMEOUT + 1 + 8.0
RANKS = {"world_size": 2, "timeout": TIMEOUT, "collective_timeout": COLLECTIVE_TIMEOUT}


@pytest.mark.parametrize(
    ("loss", "says"),
    [
        ("rank_one_exits", "rank 1 exited with code 3"),
        ("rank_one_is_killed", "rank 1 was killed by SIGKILL"),
        ("rank_one_raises", "rank 1 raised ValueError"),
        ("rank_one_hangs", "rank 1 was still running when the gate"),
    ],
    ids=["exits-early", "killed", "raises-alone", "hangs"],
)
def test_a_rank_fault_ends_the_gate_in_time_with_no_rank_left(
    fault_project, mlsmoke, loss, says
):
    fault_project(loss=f"fault_factories:{loss}", **RANKS)
    outcome = mlsmoke("overfit", "--no-cache", fault=Fault(0, reached="rank"))
    assert outcome.code == 1, outcome.output
    assert "overfit smoke: FAIL rank-failed" in outcome.stdout, outcome.output
    assert says in outcome.stdout
    assert "rank 0" in outcome.stdout  # the surviving rank is shown too
    if loss == "rank_one_hangs":
        assert "time.sleep(3600)" in outcome.stdout  # where rank 1 was stopped
    assert outcome.seconds < BOUND, outcome.seconds
    assert_clean(outcome)


def test_a_sigterm_to_the_hook_takes_every_rank_along(fault_project, mlsmoke):
    fault_project(loss="fault_factories:rank_one_hangs", **RANKS)
    outcome = mlsmoke("overfit", "--no-cache", fault=Fault(signal.SIGTERM, "rank"))
    assert outcome.code == 143, outcome.output
    assert outcome.stderr.strip().endswith("mlsmoke overfit: stopped by SIGTERM")
    assert outcome.seconds < 8.0, outcome.seconds  # signals_test.py's bound
    assert_clean(outcome)
