"""Per-example loss, score, prediction and probabilities, from one forward.

The forward: a tuple or list batch is ``(inputs, ..., labels)`` and the model gets its
first item; a mapping batch is keyword arguments, its ``labels`` (or ``label``) key
set apart (a Hugging Face batch). An output with ``.logits`` gives its logits.

The defaults: for a classifier, logits (B, C) and labels (B,): cross-entropy, and a
score of 1 when the prediction is the label; for a token model, logits (B, T, C) and
labels (B, T) (-100 ignored): the mean cross-entropy over its tokens, and their
accuracy. A project's ``loss`` and ``score`` are ``(outputs, batch) -> (B,)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy
import torch

from mlsmoke.overfit.training.instruments import user_traceback
from mlsmoke.suites.problem import SuitesProblem

IGNORE_INDEX = -100
LABEL_KEYS = ("labels", "label")


@dataclass
class PerExample:
    """One batch's figures, as Python values, one entry per example: those of
    :class:`~mlsmoke.suites.records.Evaluation`'s columns that the metric gives."""

    loss: list[float]
    score: list[float]
    prediction: list[Any]
    label: list[Any]
    label_confidence: list[float | None]  # p(label) at the weakest point
    confidence: list[float | None]  # p(prediction) there
    position: list[int | None]  # the weakest token; None for a classifier
    # per class: the sum of p(label) over the examples or tokens labelled with it,
    # and their count; added up over batches
    confidence_sums: tuple[list[float], list[int]] | None = None


def forward(model: Any, batch: Any) -> tuple[Any, Any]:
    """The model's outputs on ``batch`` and the batch's labels (None if none)."""
    if isinstance(batch, Mapping):
        label_key = next((key for key in LABEL_KEYS if key in batch), None)
        inputs = {k: v for k, v in batch.items() if k != label_key}
        return model(**inputs), batch[label_key] if label_key else None
    if isinstance(batch, (tuple, list)) and len(batch) >= 2:
        return model(batch[0]), batch[-1]
    return model(batch), None


def logits_of(outputs: Any) -> Any:
    logits = getattr(outputs, "logits", None)
    if logits is not None:
        return logits
    if isinstance(outputs, (tuple, list)) and outputs:
        return outputs[0]
    return outputs


def is_classifier(logits: Any, labels: Any) -> bool:
    """Whether these are a classifier's logits (B, C) and class labels (B,)."""
    return (
        isinstance(logits, torch.Tensor)
        and isinstance(labels, torch.Tensor)
        and logits.is_floating_point()
        and not labels.is_floating_point()
        and logits.dim() == 2
        and labels.shape == logits.shape[:1]
    )


def default_figures(logits: Any, labels: Any) -> PerExample | None:
    """The default figures, or None when the outputs and labels are not a
    classifier's nor a token model's."""
    if not isinstance(logits, torch.Tensor) or not isinstance(labels, torch.Tensor):
        return None
    if not logits.is_floating_point() or labels.is_floating_point():
        return None
    if logits.dim() == 2 and labels.shape == logits.shape[:1]:
        return _classifier(logits.float(), labels.long())
    if logits.dim() == 3 and labels.shape == logits.shape[:2]:
        return _tokens(logits.float(), labels.long())
    return None


def _classifier(logits: torch.Tensor, labels: torch.Tensor) -> PerExample | None:
    # the batch's few small arrays in numpy after one copy: a numpy step costs a
    # fraction of a torch one, and far less than a Python step per example
    log_probs = torch.log_softmax(logits, dim=-1).cpu().numpy()  # (B, C)
    label_array = labels.cpu().numpy()  # (B,)
    classes = log_probs.shape[1]
    if label_array.size and not 0 <= label_array.min() <= label_array.max() < classes:
        return None  # not class indices: not the default's to judge
    rows = numpy.arange(len(label_array))
    prediction = log_probs.argmax(axis=1)  # (B,)
    label_log_p = log_probs[rows, label_array]  # (B,)
    loss, score, p_label, p_prediction = numpy.stack([
        -label_log_p, prediction == label_array, numpy.exp(label_log_p),
        numpy.exp(log_probs[rows, prediction]),
    ]).tolist()  # fmt: skip
    label_list = label_array.tolist()
    totals = numpy.bincount(label_array, weights=p_label, minlength=classes)
    counts = numpy.bincount(label_array, minlength=classes)
    return PerExample(
        loss, score, prediction.tolist(), label_list, p_label, p_prediction,
        [None] * len(label_list), (totals.tolist(), counts.tolist()),
    )  # fmt: skip


def _tokens(logits: torch.Tensor, labels: torch.Tensor) -> PerExample:
    mask = labels != IGNORE_INDEX
    safe = labels.clamp(min=0)
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, C)
    token_log_p = log_probs.gather(2, safe[..., None])[..., 0]  # (B, T)
    counts = mask.sum(dim=1).clamp(min=1)
    loss = -(token_log_p * mask).sum(dim=1) / counts
    top_log_p, prediction = log_probs.max(dim=-1)  # (B, T), (B, T)
    score = ((prediction == labels) & mask).sum(dim=1) / counts
    p_label = token_log_p.exp()
    # the example's least confident token: cleanlab's "min" over its tokens
    at = torch.where(mask, p_label, torch.full_like(p_label, 2.0)).argmin(1)  # (B,)
    weakest_p_label = p_label.gather(1, at[:, None])[:, 0]
    weakest_p_prediction = top_log_p.gather(1, at[:, None])[:, 0].exp()
    floats = torch.stack([loss, score, weakest_p_label, weakest_p_prediction])
    loss_list, score_list, p_l, p_p = floats.tolist()
    positions = [
        position if has_token else None
        for position, has_token in zip(at.tolist(), mask.any(dim=1).tolist())
    ]
    return PerExample(
        loss_list, score_list, prediction.tolist(), labels.tolist(),
        [p if at is not None else None for p, at in zip(p_l, positions)],
        [p if at is not None else None for p, at in zip(p_p, positions)],
        positions, _confidence_sums(labels[mask], p_label[mask], logits.shape[-1]),
    )  # fmt: skip


def _confidence_sums(
    labels: torch.Tensor, p_label: torch.Tensor, classes: int
) -> tuple[list[float], list[int]]:
    totals = torch.zeros(classes, dtype=torch.float64, device=labels.device)
    totals.index_add_(0, labels, p_label.double())
    return totals.tolist(), torch.bincount(labels, minlength=classes).tolist()


def project_values(
    callable_: Callable[..., Any], key: str, outputs: Any, batch: Any, size: int
) -> list[float]:
    """``callable_(outputs, batch)`` as one float per example; SuitesProblem naming
    ``key`` when it raises or gives another shape."""
    try:
        values = callable_(outputs, batch)
    except Exception as error:
        raise SuitesProblem(
            f"{key}: raised {type(error).__name__}: {error}", user_traceback(error)
        ) from None
    if not isinstance(values, torch.Tensor) or values.shape != (size,):
        shape = tuple(values.shape) if isinstance(values, torch.Tensor) else None
        got = f"shape {shape}" if shape is not None else type(values).__name__
        raise SuitesProblem(
            f"{key}: expected one value per example, a tensor of shape ({size},);"
            f" got {got}"
        )
    return values.detach().float().cpu().tolist()
