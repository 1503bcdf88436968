"""A dtype that a library op refuses deep inside (an int64 padding mask in
``nn.TransformerEncoder``, float timesteps that diffusers' noise schedule indexes
with) is named as a dtype cause with the field and its checked cast, not as a
``train-error``; the twins with the dtype the op wants pass."""

from __future__ import annotations

import dtype_models as m
import pytest

from catalog.cases import Case
from catalog.runner import Outcome, run_case

pytest.importorskip("diffusers")


def report(outcome: Outcome) -> str:
    return outcome.result.report()


@pytest.mark.parametrize(
    ("model", "batch", "loss", "says"),
    [(m.TextEncoder, m.tokenizer_mask_batch, m.classify,
      ["the batch holds padding_mask as int64 where the step takes bool",
       'batch["padding_mask"].bool()  (checked: the step runs)']),
     (m.Denoiser, m.float_timestep_batch, m.denoising,
      ["the batch holds timesteps as float32 where the step takes int64",
       'batch["timesteps"].long()  (checked: the step runs)'])],
)  # fmt: skip
def test_a_dtype_a_library_op_refuses_names_the_field(model, batch, loss, says):
    bug = run_case(Case("dtype", "library op", model, batch, loss=loss))
    assert bug.code == "data-error", report(bug)
    for phrase in says:
        assert phrase in report(bug)


@pytest.mark.parametrize(
    ("model", "batch", "loss"),
    [(m.TextEncoder, m.padding_mask_batch, m.classify),
     (m.Denoiser, m.timestep_batch, m.denoising)],
)  # fmt: skip
def test_the_dtype_the_op_wants_passes(model, batch, loss):
    twin = run_case(Case("dtype-twin", "library op", model, batch, loss=loss))
    assert twin.code == "memorized", report(twin)
    assert "checked" not in report(twin)
