"""One checkpoint evaluated on the whole dataset, in batches, on the CPU or a GPU:
per example its content hash, loss, score, prediction, probabilities and slice.

A plain evaluation loop (model.eval(), inference mode, batches of ``batch-size``
examples taken by index), with the bookkeeping beside it. On the CPU a model under 2M
parameters runs on one thread, as the gate trains one (``training/device.py``): on a
busy 2-core machine torch's threads spin waiting for each other. A classifier's batches
wait in a chunk of up to ``CHUNK_ROWS`` examples, whose content hashes and figures
are then computed at once: a numpy or torch step costs about as much for 64 rows as
for a thousand, so it is paid once per chunk rather than once per batch.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

import torch

from mlsmoke.overfit.training.device import (
    batch_to,
    limit_cpu_threads,
    resolve_device,
    restore_cpu_threads,
)
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.instruments import user_traceback
from mlsmoke.suites import metrics
from mlsmoke.suites.checkpoint import file_sha256, load_checkpoint
from mlsmoke.suites.hashing import Pending, Rows, item_rows, resolve
from mlsmoke.suites.problem import SuitesProblem
from mlsmoke.suites.project_objects import ProjectObjects, build_model
from mlsmoke.suites.records import Evaluation, mean
from mlsmoke.suites.settings import SuitesSettings
from mlsmoke.suites.slice_names import slice_names

CHUNK_ROWS = 1024  # examples whose hashes and figures are computed at once
CHUNK_BYTES = 1 << 24  # at most this much of their logits and bytes kept for them
ROWS_KEPT = 1 << 20  # a batch's bytes to hash beyond this are hashed at once
# (examples done, of how many, mean loss so far)
Progress = Callable[[int, int, float], None]
Sums = tuple[list[float], list[int]]  # p(label) totals and counts per class


@dataclass
class _Chunk:
    """A classifier's batches evaluated, their hashes and figures still to compute;
    ``losses`` and ``scores`` hold the project's values (None: the default's)."""

    hashes: list[Pending] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    labels: list[torch.Tensor] = field(default_factory=list)
    losses: list[float] | None = None
    scores: list[float] | None = None
    slices: list[str | None] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0

    def full(self) -> bool:
        return self.rows >= CHUNK_ROWS or self.bytes >= CHUNK_BYTES


def evaluate(
    settings: SuitesSettings,
    objects: ProjectObjects,
    checkpoint: Path,
    checkpoint_key: str,
    device: str | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    started = time.perf_counter()
    where = _device(settings, device)
    model = build_model(objects, settings.key_path("model"))
    model = load_checkpoint(model, checkpoint, checkpoint_key, objects.load,
                            settings.key_path("load"))  # fmt: skip
    model.to(where).eval()
    threads = limit_cpu_threads(where, sum(p.numel() for p in model.parameters()))
    try:
        evaluation = _evaluate_all(
            settings, objects, model, where, checkpoint, progress
        )
    finally:
        restore_cpu_threads(threads)
    evaluation.seconds = time.perf_counter() - started
    return evaluation


def _evaluate_all(
    settings: SuitesSettings,
    objects: ProjectObjects,
    model: torch.nn.Module,
    where: str,
    checkpoint: Path,
    progress: Progress | None,
) -> Evaluation:
    evaluation = Evaluation(device=where, checkpoint=str(checkpoint))
    sums: list[list[Any]] = []
    size = _length(objects.dataset, settings.key_path("dataset"))
    chunk = _Chunk()

    def add(done: tuple[Evaluation, Sums | None]) -> None:
        nonlocal sums
        batch, batch_sums = done
        evaluation.extend(batch)
        if batch_sums is not None:
            sums = _added(sums, batch_sums)
        if progress is not None:
            progress(len(evaluation), size, mean(batch.losses))

    with torch.inference_mode():
        for start in range(0, size, settings.batch_size):
            indices = range(start, min(start + settings.batch_size, size))
            done = _evaluate_batch(settings, objects, model, indices, where, chunk)
            if chunk.rows and (done is not None or chunk.full()):
                add(_flush(chunk, settings))
                chunk = _Chunk()
            if done is not None:
                add(done)
        if chunk.rows:
            add(_flush(chunk, settings))
    evaluation.class_confidence = _class_confidence(sums)
    evaluation.checkpoint_sha256 = file_sha256(checkpoint)
    return evaluation


def _evaluate_batch(
    settings: SuitesSettings,
    objects: ProjectObjects,
    model: torch.nn.Module,
    indices: range,
    device: str,
    chunk: _Chunk,
) -> tuple[Evaluation, Sums | None] | None:
    """The batch's examples as columns, and its per-class confidence sums; None
    when it went into ``chunk`` instead (a classifier's)."""
    items = _items(objects.dataset, indices, settings)
    slices = slice_names(objects, items, indices, settings)
    batch = _collate(objects, items, settings)
    hashes = item_rows(items, batch, objects.collate)
    batch = batch if _on_cpu_already(batch, device) else batch_to(batch, device, None)
    try:
        outputs, labels = metrics.forward(model, batch)
    except Exception as error:
        raise SuitesProblem(
            f"{settings.key_path('model')}: the forward on examples {indices.start}-"
            f"{indices.stop - 1} raised {type(error).__name__}: {error}",
            user_traceback(error),
        ) from None
    count = len(indices)
    losses = _project_values(objects.loss, "loss", settings, outputs, batch, count)
    scores = _project_values(objects.score, "score", settings, outputs, batch, count)
    logits = metrics.logits_of(outputs)
    if metrics.is_classifier(logits, labels):
        chunk.hashes.append(_kept(hashes))
        chunk.logits.append(logits.float())
        chunk.labels.append(labels.long())
        chunk.losses = _joined(chunk.losses, losses)
        chunk.scores = _joined(chunk.scores, scores)
        chunk.slices += slices
        chunk.rows += count
        chunk.bytes += logits.numel() * 4 + _size(chunk.hashes[-1])
        return None
    figures = metrics.default_figures(logits, labels)
    return _columns(resolve([hashes]), figures, losses, scores, slices, settings,
                    count)  # fmt: skip


def _on_cpu_already(batch: Any, device: str) -> bool:
    """Whether ``batch`` is a plain list, tuple or dict of CPU tensors, evaluated on
    the CPU: batch_to would give the same tensors back."""
    if device != "cpu":
        return False
    kind = type(batch)
    values = (
        batch.values() if kind is dict else batch if kind in (list, tuple) else None
    )
    return values is not None and all(
        type(value) is torch.Tensor and value.is_cpu for value in values
    )


def _kept(hashes: Pending) -> Pending:
    """The batch's rows to hash with the chunk's: a copy, which the forward cannot
    have changed in place; hashed now when they are large (images)."""
    if not isinstance(hashes, Rows):
        return hashes
    if hashes.data.nbytes > ROWS_KEPT:
        return resolve([hashes])
    return (
        hashes if hashes.data.flags.owndata else Rows(hashes.layout, hashes.data.copy())
    )


def _size(hashes: Pending) -> int:
    return hashes.data.nbytes if isinstance(hashes, Rows) else 0


def _flush(chunk: _Chunk, settings: SuitesSettings) -> tuple[Evaluation, Sums | None]:
    """The chunk's columns, its hashes and figures computed at once."""
    logits, labels = torch.cat(chunk.logits), torch.cat(chunk.labels)
    figures = metrics.default_figures(logits, labels)
    return _columns(resolve(chunk.hashes), figures, chunk.losses, chunk.scores,
                    chunk.slices, settings, chunk.rows)  # fmt: skip


def _columns(
    hashes: list[str],
    figures: metrics.PerExample | None,
    losses: list[float] | None,
    scores: list[float] | None,
    slices: list[str | None],
    settings: SuitesSettings,
    count: int,
) -> tuple[Evaluation, Sums | None]:
    losses = losses if losses is not None else _default(figures, "loss", settings)
    scores = scores if scores is not None else _default(figures, "score", settings)
    if figures is None:
        nothing: list[Any] = [None] * count
        return Evaluation(hashes, losses, scores, nothing, nothing, nothing, nothing,
                          nothing, slices), None  # fmt: skip
    return Evaluation(
        hashes, losses, scores, figures.prediction, figures.label,
        figures.label_confidence, figures.confidence, figures.position, slices,
    ), figures.confidence_sums  # fmt: skip


def _joined(kept: list[float] | None, more: list[float] | None) -> list[float] | None:
    return more if kept is None else kept + (more or [])


def _added(sums: list[list[Any]], batch: Sums) -> list[list[Any]]:
    if not sums:
        return [list(column) for column in batch]
    return [[a + b for a, b in zip(mine, its)] for mine, its in zip(sums, batch)]


def _class_confidence(sums: list[list[Any]]) -> dict[str, float]:
    """Per class, the mean p(label) over what is labelled with it."""
    if not sums:
        return {}
    totals, counts = sums
    return {str(c): totals[c] / counts[c] for c in range(len(counts)) if counts[c]}


def _project_values(
    project: Callable[..., Any] | None,
    name: str,
    settings: SuitesSettings,
    outputs: Any,
    batch: Any,
    count: int,
) -> list[float] | None:
    """The project's ``loss`` or ``score`` of the batch; None when it has none."""
    if project is None:
        return None
    return metrics.project_values(project, settings.key_path(name), outputs, batch,
                                  count)  # fmt: skip


def _default(
    figures: metrics.PerExample | None, name: str, settings: SuitesSettings
) -> list[float]:
    if figures is None:
        raise SuitesProblem(
            f"{settings.key_path(name)}: missing, and the default needs a"
            " classifier's logits (B, C) with labels (B,), or a token model's"
            f' (B, T, C) with labels (B, T); set {name} = "package.module:function"'
            " taking (outputs, batch) and returning one value per example"
        )
    return getattr(figures, name)


def _device(settings: SuitesSettings, device: str | None) -> str:
    try:
        return resolve_device(device or settings.device)
    except ProjectProblem as error:
        key = "--device" if device else settings.key_path("device")
        raise SuitesProblem(f"{key}: {error}") from None


def _length(dataset: Any, key: str) -> int:
    try:
        return len(dataset)
    except Exception as error:
        raise SuitesProblem(
            f"{key}: len() raised {type(error).__name__}: {error}"
        ) from None


def _items(dataset: Any, indices: range, settings: SuitesSettings) -> list[Any]:
    items: list[Any] = []
    try:  # extend keeps what was read before an example that raised
        items.extend(map(operator.getitem, repeat(dataset), indices))
        return items
    except Exception as error:
        raise SuitesProblem(
            f"{settings.key_path('dataset')}: dataset[{indices.start + len(items)}]"
            " raised"
            f" {type(error).__name__}: {error}",
            user_traceback(error),
        ) from None


def _collate(
    objects: ProjectObjects, items: list[Any], settings: SuitesSettings
) -> Any:
    try:
        return objects.collate(items)
    except Exception as error:
        key = settings.key_path("collate" if settings.collate else "dataset")
        raise SuitesProblem(
            f"{key}: collating {len(items)} examples raised {type(error).__name__}:"
            f" {error}",
            user_traceback(error),
        ) from None
