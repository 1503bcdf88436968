"""``target-copies-input``: a target field holds the same values at the same
positions as an input field, and the trained model predicts it on rows it never saw.

A language model's targets are its inputs shifted by one; unshifted, the model is
asked to copy what it is given, and memorizes the batch for the wrong reason. Equal
fields alone are no evidence (a Hugging Face causal LM takes ``labels`` equal to
``input_ids`` and shifts them itself), so the trained model is checked on both
fields shuffled along the sequence by one permutation, a batch it never saw. A model
that learned to copy keeps a low loss there; one that learned the batch does not.
Script mode keeps the trained model; in factory mode a probe trains it again (the
same seed and target), and only when two fields are equal.
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training.batch_objects import converted, named_tensors
from mlsmoke.overfit.verdict import forward_probes, probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import memorized
from mlsmoke.overfit.verdict.result import Warning

CODE = "target-copies-input"
# A loss on never-seen rows below this fraction of the untrained loss is a model
# that predicts its targets from its inputs, not from what it memorized.
COPYING = 0.5


def check(run: GateRun) -> list[Warning]:
    evidence = run.evidence
    if not memorized(evidence):
        return []
    batch = run.batch_factory()
    pairs = equal_fields(batch)
    model = _trained_model(run) if pairs else None
    if model is None:
        return []
    for source, target in pairs:
        shuffled_loss = _loss_on_shuffled(run, model, batch, (source, target))
        initial = evidence.initial_loss
        if shuffled_loss is None or initial is None or initial <= 0:
            continue
        if shuffled_loss < COPYING * initial:
            return [_warning(evidence.pinned, source, target, shuffled_loss, initial)]
    return []


def _trained_model(run: GateRun) -> Any:
    """The main run's model after training: kept by script mode, trained again by a
    probe (same seed, same target) in factory mode."""
    if run.trained_model is not None:
        return run.trained_model()
    kept: list[Any] = []
    run.probe(keep_model=kept, timeout=probes.probe_timeout(run))
    return kept[0] if kept else None


def equal_fields(batch: Any) -> list[tuple[str, str]]:
    """Pairs of integer fields (earlier, later) of one shape and equal values,
    wherever neither holds a negative id (a target's ignored positions: -1, -100)."""
    named = [
        (name, tensor)
        for name, tensor in named_tensors(batch)
        if not tensor.is_floating_point() and tensor.dim() >= 1
    ]
    return [
        (first_name, second_name)
        for index, (first_name, first) in enumerate(named)
        for second_name, second in named[index + 1 :]
        if first.shape == second.shape and _equal_where_kept(first, second)
    ]


def _equal_where_kept(first: torch.Tensor, second: torch.Tensor) -> bool:
    kept = (first >= 0) & (second >= 0)
    return bool(kept.any()) and torch.equal(first[kept], second[kept])


def _loss_on_shuffled(
    run: GateRun, model: Any, batch: Any, fields: tuple[str, str]
) -> float | None:
    source, target = fields
    tensors = dict(named_tensors(batch))
    length = tensors[source].shape[-1]
    if length < 2:
        return None
    generator = torch.Generator().manual_seed(0)
    order = torch.randperm(length, generator=generator).to(tensors[source].device)
    chosen = {id(tensors[source]), id(tensors[target])}

    def shuffle(tensor: torch.Tensor) -> torch.Tensor:
        return tensor[..., order] if id(tensor) in chosen else tensor

    unseen = converted(batch, shuffle, [])
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return float(forward_probes.loss_of(run, model, unseen))
    except Exception:  # the model's own forward: no evidence either way
        return None
    finally:
        model.train(was_training)


def _warning(
    pinned: str, source: str, target: str, shuffled: float, initial: float
) -> Warning:
    batch = pinned or "the batch"
    return Warning(
        CODE,
        f"the target {field_label(batch, target)} holds the same values at the same"
        f" positions as the input {field_label(batch, source)}, and the trained model"
        f" predicts it on rows it never saw (loss {shuffled:.4g} on the batch shuffled"
        f" along its sequence, {initial:.4g} untrained): it learned to copy its input;"
        " a language model's target is its input shifted by one position"
        " (x = tokens[:-1], y = tokens[1:]); ignore this for a model meant to"
        " reconstruct its input",
    )


def field_label(batch: str, name: str) -> str:
    return f"{batch}{name}" if name.startswith("[") else f"{batch}[{name!r}]"
