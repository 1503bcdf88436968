"""The stages of a profiled script's updates, and the pure decisions around them:
which flag or key a failure names."""

from __future__ import annotations

import pytest

from mlsmoke.profile import script_errors
from mlsmoke.profile.script_stages import (
    OTHER_THREADS,
    PROFILED,
    PROFILER_WARMUP,
    TIMED,
    WARMUP,
    cut_short,
    plan,
    stage_seconds,
)


def test_the_plan_warms_up_times_both_thread_counts_then_profiles() -> None:
    assert plan(2, 3, other_threads=True) == (
        [WARMUP] * 2 + [TIMED] * 3 + [OTHER_THREADS] * 3 + [PROFILER_WARMUP]
        + [PROFILED] * 3
    )  # fmt: skip
    assert plan(0, 1, other_threads=False) == [WARMUP, TIMED, PROFILER_WARMUP,
                                               PROFILED]  # fmt: skip


def test_a_stage_is_timed_from_the_end_of_the_update_before_it() -> None:
    stages = plan(1, 2, other_threads=True)
    ended = [1.0, 1.1, 1.2, 2.2, 3.2]  # 0.1 s a timed update, 1 s at the other
    assert stage_seconds(stages, ended, TIMED) == pytest.approx(0.1)
    assert stage_seconds(stages, ended, OTHER_THREADS) == pytest.approx(1.0)
    assert stage_seconds(stages, ended, PROFILED) is None  # not run yet


def test_a_stage_cut_short_keeps_the_updates_it_had() -> None:
    stages = plan(1, 3, other_threads=True)
    first = stages.index(OTHER_THREADS)
    cut = cut_short(stages, first)
    assert cut.count(OTHER_THREADS) == 1
    assert cut[first + 1] == PROFILER_WARMUP and cut.count(PROFILED) == 3
    ended = [1.0, 1.1, 1.2, 1.3, 4.3]
    assert stage_seconds(cut, ended, OTHER_THREADS) == pytest.approx(3.0)


@pytest.mark.parametrize(
    "args, status, said, blamed",
    [
        ([], 2, "error: unrecognized arguments", "script"),
        (["--nope"], 2, "error: unrecognized arguments: --nope", "args"),
        (["--bogus=1"], None, "Unknown config key: bogus", "args"),
        (["--device=cpux"], None, "Expected one of cpu, cuda: cpux", "args"),
        (["--n_layer=2"], None, "[Errno 2] No such file: 'data/train.bin'", "script"),
    ],
)
def test_a_failure_before_training_names_the_args_when_it_was_theirs(
    args: list[str], status: object, said: str, blamed: str
) -> None:
    assert script_errors.blamed(args, status, said) == blamed


def test_the_scripts_last_words_are_quoted() -> None:
    stderr = "usage: train.py [-h]\ntrain.py: error: unrecognized arguments: --x\n"
    assert script_errors.exited("python train.py --x", 2, stderr) == (
        "`python train.py --x` exited with status 2 before building an optimizer:"
        " usage: train.py [-h] / train.py: error: unrecognized arguments: --x"
    )
