"""Repairs of the batch, tried on a copy before the gate blames the batch: written from
their mechanisms, on models of their own (a policy, a segmenter, a ranker, a tagger)."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit import check
from mlsmoke.overfit.verdict.diagnoses.checked_repair import CHECKED
from mlsmoke.overfit.verdict.diagnoses._tensor_evidence import Frame, Output
from mlsmoke.overfit.verdict.repairs import signs, trial
from mlsmoke.overfit.verdict.repairs.repair import Context, Repair

B, FEATURES, CLASSES = 24, 6, 5


def _features() -> torch.Tensor:
    return torch.randn(B, FEATURES, generator=torch.Generator().manual_seed(3))


class Head(nn.Module):
    def __init__(self, classes: int = CLASSES) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # (B, classes)


class CheckedTagger(Head):
    """A model with its own check on the labels' values, as libraries write them."""

    def forward(self, x: torch.Tensor, tags: torch.Tensor) -> torch.Tensor:
        if tags.max() >= CLASSES or tags.min() < 0:
            raise ValueError(f"tags must lie in [0, {CLASSES}): check the tag map")
        return F.cross_entropy(super().forward(x), tags)


def _report(model, batch, loss=None) -> tuple[str, str, str]:
    result = check(model, batch, loss, device="cpu", timeout=60)
    assert result.verdict == "fail", result.report()
    return result.diagnosis.code, result.report(), result.diagnosis.suggestions[0]


def _cross_entropy(model: nn.Module, batch: tuple) -> torch.Tensor:
    return F.cross_entropy(model(batch[0]), batch[1])


def test_a_library_check_on_values_is_repaired_by_a_shift_of_one_based_tags():
    tags = torch.arange(B) % CLASSES + 1  # 1..C
    code, report, first = _report(
        CheckedTagger, lambda: {"x": _features(), "tags": tags}
    )
    assert code == "label-range-error", report
    assert first == f'batch["tags"] - 1  {CHECKED}'


def test_a_distribution_support_check_is_a_label_range_error_not_a_shape_error():
    def poisson_loss(model, batch):
        x, counts = batch
        rate = F.softplus(model(x)).clamp_min(1e-3)  # (B, C)
        # The support check raises on a negative count: -1 marks "not observed".
        return (
            -torch.distributions.Poisson(rate, validate_args=True)
            .log_prob(counts.float())
            .mean()
        )

    counts = torch.randint(0, 4, (B,)).unsqueeze(1).expand(B, CLASSES).clone()
    counts[::4, 0] = -1
    code, report, first = _report(Head, lambda: (_features(), counts), poisson_loss)
    assert code == "label-range-error", report
    assert "outside the support of the loss's distribution" in report


def test_a_dtype_that_a_library_op_refuses_is_cast_on_the_copy():
    def gather_loss(model, batch):
        x, picks = batch
        scores = model(x).log_softmax(-1)
        return -scores.gather(1, picks).mean()  # gather takes int64 indices

    picks = (torch.arange(B) % CLASSES).float().unsqueeze(1)  # whole numbers as float
    code, report, first = _report(Head, lambda: (_features(), picks), gather_loss)
    assert code == "data-error", report
    assert first == f"batch[1].long()  {CHECKED}"


def test_a_target_already_one_hot_is_argmaxed():
    def nll(model, batch):
        x, y = batch
        return F.nll_loss(model(x).log_softmax(-1), y)

    one_hot = F.one_hot(torch.arange(B) % CLASSES, CLASSES)
    code, report, first = _report(Head, lambda: (_features(), one_hot), nll)
    assert code == "shape-error", report
    assert first == f"batch[1].argmax(-1)  {CHECKED}"


def test_an_index_target_for_a_loss_of_probabilities_is_one_hot_encoded():
    def multilabel(model, batch):
        x, y = batch
        return F.binary_cross_entropy_with_logits(model(x), y)

    code, report, first = _report(
        Head, lambda: (_features(), torch.arange(B) % CLASSES), multilabel
    )
    assert code == "shape-error", report
    assert first == f"F.one_hot(batch[1], {CLASSES}).float()  {CHECKED}"


def test_one_based_class_indices_are_shifted():
    labels = torch.arange(B) % CLASSES + 1
    code, report, first = _report(
        Head, lambda: (_features(), labels), lambda m, b: F.cross_entropy(m(b[0]), b[1])
    )
    assert code == "label-range-error", report
    assert first == f"batch[1] - 1  {CHECKED}"


def test_an_ignore_value_outside_the_loss_s_setting_is_mapped_to_ignore_index():
    labels = torch.arange(B) % CLASSES
    labels[::5] = -1  # "no label", where the loss ignores -100
    code, report, first = _report(
        Head, lambda: (_features(), labels), lambda m, b: F.cross_entropy(m(b[0]), b[1])
    )
    assert code == "label-range-error", report
    assert first == f"batch[1].masked_fill(batch[1] == -1, -100)  {CHECKED}"


def test_a_shift_that_runs_but_changes_meaning_is_a_hypothesis_not_the_fix():
    labels = torch.arange(B) % (CLASSES - 1) + 2  # 2..5 against 5 outputs
    result = check(Head, lambda: (_features(), labels), _cross_entropy, device="cpu")
    report = result.report()
    assert result.diagnosis.code == "label-range-error", report
    assert CHECKED not in report
    assert "it may train on the wrong classes" in report
    assert "values are 2..5 against 5 outputs" in report


def test_no_repair_is_offered_when_every_tried_repair_fails():
    """The loss itself casts the indices to float: no change to the batch helps."""

    def casts_its_own_indices(model, batch):
        x, picks = batch
        scores = model(x).log_softmax(-1)
        return -scores.gather(1, picks.float().unsqueeze(1)).mean()

    batch = (_features(), torch.arange(B) % CLASSES)
    result = check(Head, lambda: batch, casts_its_own_indices, device="cpu")
    report = result.report()
    assert result.verdict == "fail", report
    assert CHECKED not in report
    assert "tried on a copy of the batch, none made the step run: batch[1].float()" in (
        report
    )
    assert len(result.diagnosis.suggestions) <= 2


def test_a_range_error_is_not_repaired_by_changing_labels_that_are_in_range():
    """Labels 0..C-1 shifted by the loss's own code: one-hot labels would make the
    step run, but the labels are right and the loss is wrong."""
    labels = torch.arange(B) % CLASSES

    def shifted_by_the_loss(model, batch):
        return F.cross_entropy(model(batch[0]), batch[1] + 1)

    result = check(Head, (_features(), labels), shifted_by_the_loss, device="cpu")
    assert result.diagnosis.code == "label-range-error", result.report()
    assert CHECKED not in result.report()


class FirstTargetsDecide(Head):
    """Picks its loss by the dtype of the first targets it sees, and keeps it, as a
    library head fixes its problem type: float targets, a multi-label loss."""

    def __init__(self) -> None:
        super().__init__()
        self.multi_label: bool | None = None

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.multi_label is None:
            self.multi_label = y.is_floating_point()
        logits = super().forward(x)
        if self.multi_label:
            return F.binary_cross_entropy_with_logits(logits, y)
        return F.cross_entropy(logits, y)


def test_each_try_runs_on_a_model_no_earlier_try_has_changed():
    labels = (torch.arange(B) % CLASSES).float()  # class indices stored as floats
    code, report, first = _report(
        FirstTargetsDecide, lambda: {"x": _features(), "y": labels}
    )
    assert code == "data-error", report
    assert first == f'batch["y"].long()  {CHECKED}'


def test_the_project_s_batch_is_never_changed_by_the_tries():
    labels = torch.arange(B) % CLASSES + 1
    batch = (_features(), labels)
    kept = (batch[0].clone(), labels.clone())
    check(
        Head, lambda: batch, lambda m, b: F.cross_entropy(m(b[0]), b[1]), device="cpu"
    )
    assert torch.equal(batch[0], kept[0]) and torch.equal(batch[1], kept[1])


def test_a_step_that_runs_in_the_harness_proves_nothing_so_no_repair_is_named():
    """An error that is not the batch's (raised once, at the first step only) leaves the
    control running: no repair is tried."""
    calls = []

    def flaky(model, batch):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("expected scalar type Long but found Float")
        return F.cross_entropy(model(batch[0]), batch[1])

    result = check(Head, lambda: (_features(), torch.arange(B) % CLASSES), flaky,
                   device="cpu")  # fmt: skip
    assert CHECKED not in result.report()


def _frame(**tensors: torch.Tensor) -> Frame:
    return Frame(dict(tensors))


@pytest.mark.parametrize(
    "frame, kinds",
    [
        # cross_entropy's locals: a class past the output's 5
        (_frame(input=torch.randn(4, CLASSES), target=torch.tensor([0, 1, 2, 7])),
         ["range"]),
        # gather's index stored as floats, beside the features
        (_frame(x=torch.randn(4, FEATURES), picks=torch.tensor([[0.0], [3.0]] * 2)),
         ["cast"]),
        # a column of class indices where the loss takes (B,)
        (_frame(input=torch.randn(4, CLASSES), target=torch.tensor([[0], [1]] * 2)),
         ["shape"]),
        # right shapes, dtypes and values: nothing to point at
        (_frame(input=torch.randn(4, CLASSES), target=torch.tensor([0, 1, 2, 3])),
         []),
    ],
)  # fmt: skip
def test_the_failing_frame_s_tensors_decide_which_kinds_are_tried(frame, kinds):
    seen = signs.pointed_at([], [[frame]], Output(CLASSES, (4, CLASSES)))
    assert seen.kinds == kinds


def test_a_kind_nothing_points_at_is_not_tried_and_the_field_held_comes_first():
    def repair(field: str, topic: str) -> Repair:
        return Repair(field, "data-error", f"{field} {topic}", lambda t: t, topic=topic)

    offered = [repair("x", "cast"), repair("y", "shape"), repair("y", "cast")]
    ranked = trial.rank(offered, signs.Signs(["cast"], {"y"}))
    assert [r.written for r in ranked] == ["y cast", "x cast"]
    assert trial.rank(offered, signs.Signs()) == offered  # no evidence: all, as offered


def test_the_field_the_evidence_is_about_is_found_by_its_values():
    target = torch.tensor([1, 2, 5, 3])
    fields = [("x", torch.randn(4, FEATURES)), ("y", target.clone())]
    frame = _frame(input=torch.randn(4, CLASSES), target=target)
    seen = signs.pointed_at(fields, [[frame]], Output(CLASSES, (4, CLASSES)))
    assert seen.kinds == ["range"] and seen.fields == {"y"}


def test_with_field_copies_containers_and_keeps_their_types():
    from collections import namedtuple

    Pair = namedtuple("Pair", "x y")
    y = torch.tensor([1, 2])
    assert trial.with_field(Pair(1, y), "batch[1]", "new") == Pair(1, "new")
    assert trial.with_field([1, y], "batch[0]", 5)[0] == 5
    swapped = trial.with_field({"a": 1, "y": y}, "y", 0)
    assert swapped == {"a": 1, "y": 0} and isinstance(swapped, dict)
    assert Context(3, (4, 3)).indexes_output(torch.zeros(4))


class NoisyEval(Head):
    """Adds a little noise from numpy's RNG (which no torch seed fixes) in eval mode
    too, as a model with test-time augmentation does; ``batch_stats`` names the
    dimension its input normalization reduces over."""

    def __init__(self, batch_stats: int | None) -> None:
        super().__init__()
        self.batch_stats = batch_stats

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        import numpy

        if self.batch_stats is not None:
            x = (x - x.mean(self.batch_stats, keepdim=True)) / x.std(
                self.batch_stats, keepdim=True
            )
        noise = torch.from_numpy(numpy.random.normal(0, 1e-3, size=x.shape[-1]))
        return super().forward(x + noise.float())


@pytest.mark.parametrize("batch_stats, warned", [(0, True), (-1, False), (None, False)])
def test_batch_mixing_is_a_move_well_above_the_noise_floor(batch_stats, warned):
    batch = (_features(), torch.arange(B) % CLASSES)
    result = check(lambda: NoisyEval(batch_stats), batch, _cross_entropy, device="cpu")
    assert ("batch-mixing" in {w.code for w in result.warnings}) is warned
