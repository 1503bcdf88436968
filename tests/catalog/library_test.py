"""The library catalog (transformers and Lightning) through the gate and through a plain
torch.optim loop: every correct model memorizes in both with no warning, every bug
fails with its code and warnings under the gate and fails (or raises) in the plain
loop. ``benchmarks/bench_catalog.py`` prints both catalogs."""

from __future__ import annotations

import sys

import pytest
from mlsmoke.overfit.verdict import checks, diagnoses, ranks
from mlsmoke.overfit.verdict.checks import script_writes_project, step_order
from mlsmoke.overfit.verdict.checks import target_copies_input
from mlsmoke.overfit.verdict.diagnoses import schedule_holds_lr, script_ended
from mlsmoke.overfit.verdict.diagnoses import step_function

from .library.cases import BUGS, CASES, CORRECT, LIGHTNING, SEQ2SEQ, VISION, Case
from .library.cases import BERT, GPT2
from .library.plain import train_plainly
from .library.runner import run_case
from .runner import assert_plain_loop_agrees, assert_right

pytestmark = pytest.mark.library
IDS = [case.name for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_library_case_gets_its_code_and_warnings(case: Case) -> None:
    assert_right(run_case(case))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_library_case_in_a_plain_torch_loop(case: Case) -> None:
    outcome = train_plainly(case)
    assert_plain_loop_agrees(case, outcome.memorized, outcome)


# Codes that name no bug: a pass, the gate's own configuration, and the fallbacks.
NOT_A_BUG = {"memorized", "config-error", "train-error", "not-memorized"}
# Warnings only a run off the CPU gives (the catalog trains on the CPU); they are
# tested by simulation (tests/overfit/batch_types_test.py).
OFF_THE_CPU = {"batch-not-moved"}
# A step function's invariants need the project's step function, which no catalog model
# has: tests/overfit/step_function_test.py runs each, with a bug and a correct step.
STEP_FUNCTION = set(step_function.CODES) | {step_order.CODE}
# What only a training script gives: its schedule, the trained model a warning
# checks, the files it writes, and its own end (tests/overfit/script_mode_test.py,
# mingpt_script_test.py and script_mode_trainers_test.py run each).
SCRIPT_MODE = {schedule_holds_lr.CODE, target_copies_input.CODE,
               script_writes_project.CODE, script_ended.CODE}  # fmt: skip
# What only two or more ranks give (verdict/ranks/): tests/overfit/ddp_test.py starts
# real ranks for each, and checks that it covers every one of them.
DISTRIBUTED = set(ranks.CODES)


def test_library_catalog_covers_every_code_warning_and_family() -> None:
    codes = {d.code for d in diagnoses.REGISTRY} - NOT_A_BUG - STEP_FUNCTION
    codes -= SCRIPT_MODE
    assert not DISTRIBUTED & {case.code for case in CASES}
    warning_codes = {sys.modules[c.__module__].CODE for c in checks.REGISTRY}
    warning_codes -= STEP_FUNCTION | OFF_THE_CPU | SCRIPT_MODE
    assert len(BUGS) >= 25 and len(CORRECT) >= 10
    assert {case.code for case in BUGS} == codes
    assert set().union(*(case.warnings for case in CASES)) == warning_codes
    families = {BERT, GPT2, SEQ2SEQ, VISION, LIGHTNING}
    assert families <= {case.architecture for case in BUGS}
    assert families <= {case.architecture for case in CORRECT}
    assert len({case.name for case in CASES}) == len(CASES)
