"""The families catalog (diffusion, VAE, flows, Gaussian processes, graph networks,
contrastive models, LoRA adapters, VQ codebooks, straight-through estimators) through
the gate and through a plain torch.optim loop: every correct model memorizes in both
with no warning, every bug fails with its code under the gate and fails (or raises)
in the plain loop. ``benchmarks/bench_catalog.py`` prints all three catalogs."""

from __future__ import annotations

import pytest

from .families.cases import BUGS, CASES, CORRECT, Case
from .families.plain import train_plainly
from .library.runner import run_case
from .runner import assert_plain_loop_agrees, assert_right

pytestmark = pytest.mark.library
IDS = [case.name for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_family_case_gets_its_code_and_warnings(case: Case) -> None:
    assert_right(run_case(case))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_family_case_in_a_plain_torch_loop(case: Case) -> None:
    outcome = train_plainly(case)
    assert_plain_loop_agrees(case, outcome.memorized, outcome)


def test_families_catalog_has_each_family_correct_and_buggy() -> None:
    correct = {case.architecture for case in CORRECT}
    buggy = {case.architecture for case in BUGS}
    assert len(correct) >= 8 and len(buggy) >= 6
    assert buggy <= correct  # every bug has a correct model of its family beside it
    assert len({case.name for case in CASES}) == len(CASES)
