"""The tensors of a failed step as evidence, with plain tensors and real errors: which
shapes are class indices of an output, which values fall outside it or outside a
distribution's support, which dtype an operation refuses, which shape disagrees; and
the frames an error (and the error it was raised from) went through."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses import _tensor_evidence as tensors
from mlsmoke.overfit.verdict.diagnoses._tensor_evidence import Frame, Output
from mlsmoke.overfit.verdict.repairs import signs


def _raised_frames(call) -> list[list[Frame]]:
    try:
        call()
    except Exception as error:  # what the gate keeps as its evidence
        chains = _errors.raised_locals(Evidence(error=error, phase="loss"))
        return [[tensors.frame_of(local_values) for local_values in c] for c in chains]
    raise AssertionError("the call was to raise")


@pytest.mark.parametrize(
    ("shape", "output", "classes"),
    [
        ((8,), Output(5, (8, 5)), 5),  # one index per sample
        ((2, 7), Output(11, (2, 7, 11)), 11),  # per token
        ((14,), Output(11, (2, 7, 11)), 11),  # per token, flattened
        ((2, 4, 4), Output(4, (2, 3, 4, 4)), 3),  # per pixel, classes in dimension 1
        ((8, 1), Output(5, (8, 5)), None),  # a column: not the output's indices
        ((8,), Output(1, (8, 1)), None),  # one output names no classes
        ((8,), Output(5), 5),  # no output seen: one index per sample, the head's
        ((8, 3), Output(5), None),
    ],
)
def test_class_indices_are_shaped_like_the_output_without_its_classes(
    shape, output, classes
):
    assert tensors.classes_indexed(torch.zeros(shape, dtype=torch.long), output) == (
        classes
    )
    assert tensors.classes_indexed(torch.zeros(shape), output) is None  # floats


def test_values_outside_the_classes_leave_the_ignore_index_alone():
    output = Output(4, (6, 4))
    found = tensors.outside_classes("y", torch.tensor([0, 3, -100, 4, -1, 2]), output)
    assert found is not None and found.values == (-1.0, 4.0)
    assert found.describe() == "y holds -1, 4, outside classes 0..3"
    assert tensors.outside_classes("y", torch.tensor([0, 3, -100, 1]), output) is None


def test_a_distribution_s_value_outside_its_support_is_read_from_its_frame():
    logits = torch.zeros(4, 3)
    actions = torch.tensor([1, 2, 3, 1])  # 1-based: 3 is past the support 0..2
    chains = _raised_frames(
        lambda: torch.distributions.Categorical(logits=logits).log_prob(actions)
    )
    found = tensors.outside_support(chains[0])
    assert found is not None and found.support and found.values == (3.0,)
    assert torch.equal(found.tensor, actions)


def test_the_error_a_project_raised_from_keeps_torch_s_frames():
    def reworded():
        try:
            F.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 5]))
        except IndexError as error:
            raise ValueError("etiquetas inválidas") from error

    chains = _raised_frames(reworded)
    assert len(chains) == 2
    found = tensors.outside_values([], chains, Output(3, (4, 3)))
    assert found is not None and found.name == "target" and found.values == (5.0,)


def test_ids_into_a_lookup_table_are_inputs_not_class_targets():
    table = nn.Embedding(3, 4)
    chains = _raised_frames(lambda: table(torch.tensor([0, 1, 2, 7])))
    assert tensors.outside_values([], chains, Output(3, (4, 3))) is None


@pytest.mark.parametrize(
    ("call", "refused"),
    [
        (lambda: nn.Conv2d(3, 4, 3)(torch.zeros(2, 3, 8, 8, dtype=torch.uint8)),
         "input"),  # uint8 pixels into a float layer
        (lambda: F.binary_cross_entropy_with_logits(
            torch.zeros(4, 3), torch.ones(4, 3, dtype=torch.long)), "target"),
        (lambda: F.embedding(torch.tensor([[0.0, 5.0]]), torch.zeros(8, 2)),
         "input"),  # ids stored as floats
        (lambda: F.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 5])),
         None),  # float logits, integer indices: the dtypes it takes
    ],
)  # fmt: skip
def test_a_dtype_the_operation_refuses_is_read_from_its_frame(call, refused):
    frame = tensors.raised_frame(_raised_frames(call)[0])
    assert frame is not None and signs.refused_dtype(frame) == refused


def test_whole_floats_are_no_indices_where_they_are_pixels_or_regression_targets():
    pixels = Frame({"input": torch.full((2, 3, 4, 4), 255.0)})
    regression = Frame({"input": torch.randn(4, 2), "target": torch.ones(4, 2) * 3})
    assert signs.refused_dtype(pixels) is None
    assert signs.refused_dtype(regression) is None


@pytest.mark.parametrize(
    ("call", "disagreeing"),
    [
        (lambda: F.cross_entropy(torch.zeros(4, 3), torch.zeros(4, 1).long()),
         "target"),  # a column of indices
        (lambda: nn.Linear(6, 3)(torch.zeros(4, 5)), "input"),
        (lambda: nn.Conv2d(1, 4, 3)(torch.zeros(2, 8, 8, 1)), "input"),  # channels last
        (lambda: F.nll_loss(torch.zeros(4, 3), F.one_hot(torch.arange(4) % 3, 3)),
         "target"),  # one-hot where indices are taken
        (lambda: F.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 5])),
         None),  # shapes agree: a value is wrong
    ],
)  # fmt: skip
def test_a_shape_that_disagrees_is_read_from_the_failing_frame(call, disagreeing):
    frame = tensors.raised_frame(_raised_frames(call)[0])
    assert frame is not None
    assert signs.disagreeing_shape(frame, Output(3, (4, 3))) == disagreeing
