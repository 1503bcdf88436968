"""A field is a class target only where it reaches the loss or the output's last
dimension: traced uses with plain tensors, then the gate on a timestep-conditioned
model whose timesteps exceed the head's width, with its real bug elsewhere, and its
twins whose labels are truly past the head; the same when the model checks its
inputs itself with Python numbers (``int(y.max()) >= n``), which torch never sees."""

from __future__ import annotations

import functools

import pytest
import torch
from torch.nn import functional as F

from timestep_models import (
    CLASSES,
    STEPS,
    CheckedTimestepClassifier,
    TimestepClassifier,
    timestep_batch,
    timestep_loss,
)

from mlsmoke.overfit import check
from mlsmoke.overfit.verdict.diagnoses.checked_repair import CHECKED
from mlsmoke.overfit.verdict import raising_check
from mlsmoke.overfit.verdict.target_reach import Reach, Use, _Uses


def _reach(step, fields: dict[str, torch.Tensor]) -> Reach:
    tracer = _Uses(fields.items())
    try:
        with torch.no_grad(), tracer:
            step(**fields)
    except Exception:
        pass
    return Reach(tracer.uses)


_LOGITS = torch.zeros(4, CLASSES)
_SCHEDULE = torch.linspace(1.0, 0.0, STEPS + 1)
_LABELS = torch.tensor([0, 3, CLASSES, 1])
_TIMESTEPS = torch.tensor([0, 500, STEPS, 7])


def _to_loss(t, y):
    return F.cross_entropy(_LOGITS * _SCHEDULE[t][:, None], y.view(-1))


def _compared(t, y):
    if (y.max() >= CLASSES) or (t > STEPS):
        raise ValueError("")


def _gathered(t, y):
    return -_LOGITS.log_softmax(-1).gather(1, y[:, None]) * _SCHEDULE.gather(0, t)


def _one_hot(t, y):
    return (F.one_hot(y, CLASSES) * _LOGITS).sum() + _SCHEDULE[t].sum()


@pytest.mark.parametrize("step", [_to_loss, _compared, _gathered, _one_hot])
def test_labels_reach_the_output_and_timesteps_do_not(step):
    reach = _reach(step, {"t": _TIMESTEPS, "y": _LABELS})
    assert reach.is_class_target("y", _LABELS, CLASSES)
    assert not reach.is_class_target("t", _TIMESTEPS, CLASSES)


def test_a_frame_local_is_matched_by_its_values_reshaped():
    reach = _reach(_to_loss, {"t": _TIMESTEPS, "y": _LABELS})
    assert reach.is_class_target("target", _LABELS.view(2, 2), CLASSES)
    assert not reach.is_class_target("target", _TIMESTEPS, CLASSES)


def test_float_labels_cast_to_long_reach_the_loss():
    def cast(t, y):
        return F.cross_entropy(_LOGITS * _SCHEDULE[t][:, None], y.long())

    reach = _reach(cast, {"t": _TIMESTEPS, "y": _LABELS.float()})
    assert reach.is_class_target("y", _LABELS.float(), CLASSES)
    assert not reach.is_class_target("t", _TIMESTEPS, CLASSES)


def test_a_comparison_with_another_width_is_no_class_target():
    reach = _reach(_compared, {"t": _TIMESTEPS, "y": torch.zeros(4, dtype=int)})
    assert not reach.is_class_target("t", _TIMESTEPS, CLASSES)  # compared with 1000


def _fails(model, batch):
    result = check(model, batch, timestep_loss, device="cpu", timeout=60)
    assert result.verdict == "fail", result.report()
    return result.diagnosis.code, result.report()


def test_timesteps_past_the_head_are_no_label_suspect_when_a_conv_refuses():
    code, report = _fails(lambda: TimestepClassifier(in_channels=4), timestep_batch)
    assert code == "shape-error", report
    assert "label" not in report


def test_one_based_labels_beside_timesteps_get_the_checked_shift():
    code, report = _fails(
        TimestepClassifier, functools.partial(timestep_batch, first_label=1)
    )
    assert code == "label-range-error", report
    assert f"batch[2] - 1  {CHECKED}" in report
    assert "batch[1]" not in report  # the timesteps are never the suspect


def test_a_label_past_the_head_beside_timesteps_is_read_from_the_labels():
    code, report = _fails(
        TimestepClassifier, functools.partial(timestep_batch, last_label=CLASSES)
    )
    assert code == "label-range-error", report
    assert f"holds {CLASSES}, outside classes 0..{CLASSES - 1}" in report
    assert "batch[1]" not in report


# --- a project's own check in Python numbers, read from the frame that raised -----


class _Head(torch.nn.Module):
    out_features = CLASSES

    @property
    def computed(self) -> int:
        raise AssertionError("a property is code: never run")


def _raised(check, **fields) -> list:
    try:
        check(**fields)
    except Exception as error:
        return [(t, n) for t, n in raising_check.comparisons(error)]
    raise AssertionError("the check did not raise")


def _labels_as_ints(t, y, head=_Head()):
    if int(t.max()) > STEPS:
        raise ValueError("timesteps past the schedule")
    if y.max().item() >= head.out_features:
        raise ValueError("a label names no class")


def _asserted(t, y, head=_Head()):
    assert 0 <= int(y.min()) and int(y.max()) < head.out_features - 0, "labels"


def _sizes_only(t, y):
    if len(y) > CLASSES or y.shape[0] > CLASSES:
        raise ValueError("too many labels")


def _number_from_code(t, y, head=_Head()):
    if int(y.max()) >= head.computed or int(y.max()) >= max(CLASSES, 1):
        raise ValueError("labels")


def test_a_python_check_of_labels_is_read_from_the_frame_that_raised():
    found = _raised(_labels_as_ints, t=_TIMESTEPS, y=_LABELS)
    assert [(t is _LABELS, n) for t, n in found] == [(True, CLASSES)]
    found = _raised(_asserted, t=_TIMESTEPS, y=_LABELS)
    assert [(t is _LABELS, n) for t, n in found] == [(True, 0), (True, CLASSES)]


def test_a_python_check_of_sizes_or_of_computed_numbers_is_no_comparison():
    assert _raised(_sizes_only, t=_TIMESTEPS, y=torch.zeros(CLASSES + 1)) == []
    assert _raised(_number_from_code, t=_TIMESTEPS, y=_LABELS) == []


def test_timesteps_checked_in_python_against_their_schedule_are_no_class_target():
    try:
        _labels_as_ints(t=_TIMESTEPS + 1, y=_LABELS)
    except ValueError as error:
        ((tensor, number),) = raising_check.comparisons(error)
    assert number == STEPS  # compared with the schedule, not the head's width
    reach = Reach([Use(frozenset({"t"}), tensor, number, "compared with")])
    assert not reach.is_class_target("t", _TIMESTEPS + 1, CLASSES)


def _fails_alone(model, batch):
    result = check(model, batch, device="cpu", timeout=60)
    assert result.verdict == "fail", result.report()
    return result.diagnosis.code, result.report()


def test_labels_past_the_head_refused_by_the_models_own_python_check():
    code, report = _fails_alone(
        CheckedTimestepClassifier, functools.partial(timestep_batch, last_label=CLASSES)
    )
    assert code == "label-range-error", report
    assert f"labels holds {CLASSES}, outside classes 0..{CLASSES - 1}" in report
    assert "batch[1]" not in report  # the timesteps are never the suspect


def test_one_based_labels_refused_by_the_models_own_check_get_the_checked_shift():
    code, report = _fails_alone(
        CheckedTimestepClassifier, functools.partial(timestep_batch, first_label=1)
    )
    assert code == "label-range-error", report
    assert f"batch[2] - 1  {CHECKED}" in report
    assert "tried first, still failing" not in report  # the evidence chose it


@pytest.mark.parametrize(
    "model",
    [
        # the timesteps pass their check; a conv refuses the images
        functools.partial(CheckedTimestepClassifier, in_channels=4),
        # the timesteps' own check raises: 1000 is past a 1000-step schedule
        functools.partial(CheckedTimestepClassifier, schedule=STEPS),
    ],
)
def test_timesteps_checked_in_python_are_never_blamed_as_labels(model):
    code, report = _fails_alone(model, timestep_batch)
    assert code != "label-range-error", report
    assert "outside classes" not in report
    assert "batch[1] - " not in report
