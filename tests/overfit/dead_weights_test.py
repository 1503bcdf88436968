"""dead-weights' causes, each told by zeroing a module's output in one forward."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from mlsmoke.overfit.verdict.dead_weights import (
    CUT,
    NEVER_CALLED,
    UNUSED,
    cause_of,
    dead_modules,
)


class Net(nn.Module):
    def __init__(self, wiring: str) -> None:
        super().__init__()
        self.wiring = wiring
        self.branch = nn.Linear(4, 4)
        self.trunk = nn.Linear(4, 4)
        self.pooler = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.trunk(x)
        if self.wiring == "cut":
            out = out + self.branch(x).detach()
        elif self.wiring == "unused":
            self.branch(x)
        return out.sum(-1)


@pytest.mark.parametrize(
    ("wiring", "cause"), [("cut", CUT), ("unused", UNUSED), ("skipped", NEVER_CALLED)]
)
def test_the_cause_is_what_zeroing_the_output_shows(wiring, cause):
    torch.manual_seed(0)
    assert cause_of(Net(wiring), torch.randn(3, 4), "branch") == cause


def test_a_pooler_the_forward_skips_is_never_called_not_cut():
    assert cause_of(Net("cut"), torch.randn(3, 4), "pooler") == NEVER_CALLED


def test_dead_parameters_are_named_by_their_outermost_dead_module_else_alone():
    dead = {"branch.weight", "branch.bias", "pooler.weight", "trunk.bias"}
    found = {m.name: m.parameters for m in dead_modules(Net("cut"), dead)}
    assert found == {
        "branch": ["branch.weight", "branch.bias"],
        "pooler": ["pooler.weight"],
        "trunk": ["trunk.bias"],
    }
