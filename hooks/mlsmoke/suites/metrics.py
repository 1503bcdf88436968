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

import torch

from mlsmoke.overfit.training.instruments import user_traceback
from mlsmoke.suites.problem import SuitesProblem
from mlsmoke.suites.records import Weakest

IGNORE_INDEX = -100
LABEL_KEYS = ("labels", "label")


@dataclass
class PerExample:
    """One batch's figures, as Python values, one entry per example."""

    loss: list[float]
    score: list[float]
    prediction: list[Any]
    label: list[Any]
    weakest: list[Weakest | None]
    # per class (C,): the sum of p(label) over the examples or tokens labelled with
    # it, and their count; added up over batches, as tensors
    confidence_sums: tuple[torch.Tensor, torch.Tensor] | None = None


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


def _classifier(logits: torch.Tensor, labels: torch.Tensor) -> PerExample:
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, C)
    label_log_p = log_probs.gather(1, labels[:, None])[:, 0]  # (B,)
    top_log_p, prediction = log_probs.max(dim=-1)  # (B,), (B,)
    p_label = label_log_p.exp()
    # one copy to Python for the floats: loss, score, p(label), p(prediction)
    floats = torch.stack(
        [-label_log_p, (prediction == labels).float(), p_label, top_log_p.exp()]
    ).tolist()
    label_list, prediction_list = labels.tolist(), prediction.tolist()
    weakest = [
        Weakest(label, predicted, p_l, p_p)
        for label, predicted, p_l, p_p in zip(
            label_list, prediction_list, floats[2], floats[3]
        )
    ]
    return PerExample(
        floats[0],
        floats[1],
        prediction_list,
        label_list,
        weakest,  # type: ignore[arg-type]
        _confidence_sums(labels, p_label, logits.shape[-1]),
    )


def _tokens(logits: torch.Tensor, labels: torch.Tensor) -> PerExample:
    mask = labels != IGNORE_INDEX
    safe = labels.clamp(min=0)
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, C)
    token_log_p = log_probs.gather(2, safe[..., None])[..., 0]  # (B, T)
    counts = mask.sum(dim=1).clamp(min=1)
    loss = -(token_log_p * mask).sum(dim=1) / counts
    prediction = log_probs.argmax(dim=-1)  # (B, T)
    score = ((prediction == labels) & mask).sum(dim=1) / counts
    p_label = token_log_p.exp()
    # the example's least confident token: cleanlab's "min" over its tokens
    weakest_at = torch.where(mask, p_label, torch.full_like(p_label, 2.0)).argmin(1)
    p_prediction = log_probs.max(dim=-1).values.exp()
    weakest = []
    for row, position in enumerate(weakest_at.tolist()):
        if not bool(mask[row].any()):
            weakest.append(None)
            continue
        weakest.append(
            Weakest(
                int(labels[row, position]), int(prediction[row, position]),
                float(p_label[row, position]), float(p_prediction[row, position]),
                position,
            )
        )  # fmt: skip
    return PerExample(
        loss.tolist(),
        score.tolist(),
        prediction.tolist(),
        labels.tolist(),
        weakest,
        _confidence_sums(labels[mask], p_label[mask], logits.shape[-1]),
    )


def _confidence_sums(
    labels: torch.Tensor, p_label: torch.Tensor, classes: int
) -> tuple[torch.Tensor, torch.Tensor]:
    totals = torch.zeros(classes, dtype=torch.float64, device=labels.device)
    totals.index_add_(0, labels, p_label.double())
    return totals, torch.bincount(labels, minlength=classes)


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
