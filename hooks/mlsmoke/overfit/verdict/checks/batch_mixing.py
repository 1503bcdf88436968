"""``batch-mixing``: in eval mode, the output for sample i moves when the input of
another sample j changes, so samples leak into each other (a ``view`` where a
``permute`` was meant, a forgotten ``batch_first``, a mean or std over the batch
dimension in ``forward``).

Found by perturbation, which covers every input type: token ids are replaced by other
ids the batch holds, floats get noise. Checked for several i, not only the first (some
bugs leave sample 0 alone): one eval forward per i with every other sample changed,
then at most a few more to name a j. A batch that carries an input over pairs of
its samples (a (B, B) adjacency, a (2, E) edge list) relates them on purpose, and so
does an output over pairs of samples ((B, B) in-batch similarities of a contrastive
model): neither is checked. Tensors inside a batch object (a graph, a TensorDict)
change on a copy.

A move counts when it stands well above the noise floor: the same batch is run twice
first, and what differs between those two runs (a model drawing noise from an RNG the
gate does not seed, a nondeterministic kernel) is noise, not mixing. When the floor
itself is a real share of the output, eval mode is too noisy to tell, and the check
says nothing: that is nondeterministic-batch's question.
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training.batch_objects import converted, tensors_in
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "batch-mixing"
RTOL, ATOL = 1e-4, 1e-6
FLOOR_FACTOR = 10.0  # a move counts at this many times the noise floor
NOISY_EVAL = 1e-2  # a floor above this share of the output: too noisy to tell
NAMING_TRIES = 4  # forwards spent naming the sample that leaks

HINT = (
    "look for a view or reshape where transpose/permute was meant, a sequence model"
    " missing batch_first=True, or statistics over the batch dimension in forward"
    " (a mean or std over dim 0)"
)


def check(run: GateRun) -> list[Warning]:
    capture = forward_probes.capture_forward(run)
    if capture is None or not (capture.args or capture.kwargs):
        return []
    capture.model.eval()
    base = seeded_logits(capture, capture.args, capture.kwargs)
    if base is None or base.dim() < 2 or int(base.shape[0]) < 2:
        return []
    again = seeded_logits(capture, capture.args, capture.kwargs)
    if again is None or again.shape != base.shape:
        return []
    floor = noise_floor(base, again)
    if floor > NOISY_EVAL * _scale(base):
        return []  # eval mode is not reproducible: nondeterministic-batch's question
    samples = int(base.shape[0])
    if _relates_samples(capture, samples):
        return []  # a graph over the batch's samples: they are meant to interact
    skipped: list[str] = []
    for i in sample_indices(samples):
        others = [j for j in range(samples) if j != i]
        if not moves(capture, base, i, others, floor, skipped):
            continue
        if _compares_pairs(capture, base, i):
            return []  # in-batch similarities: entry (i, j) is about samples i and j
        leak = _name_leak(capture, base, i, others, floor)
        source = f"sample {leak}" if leak is not None else "the other samples"
        return [
            Warning(
                CODE,
                f"in eval mode the output for sample {i} changes when the input of"
                f" {source} changes: samples leak into each other; {HINT}",
            )
        ]
    run.notes += [
        f"batch-mixing: not checked inside a {name}: its tensors cannot be changed"
        " on a copy of it"
        for name in dict.fromkeys(skipped)
    ]
    return []


def _relates_samples(capture: forward_probes.ForwardCapture, samples: int) -> bool:
    """An input that relates samples to each other on purpose, so that they see
    each other (a graph network): one indexed by two samples, (B, B, ...), an
    adjacency or attention mask over the batch; or an edge list, (2, E) integer
    pairs of sample indices (torch_geometric's edge_index)."""
    inputs = tensors_in((capture.args, capture.kwargs))
    return any(
        _pairs_of_samples(value, samples) or _edge_list(value, samples)
        for value in inputs
    )


def _pairs_of_samples(value: torch.Tensor, samples: int) -> bool:
    return value.dim() >= 2 and tuple(value.shape[:2]) == (samples, samples)


def _edge_list(value: torch.Tensor, samples: int) -> bool:
    """(2, E) integers, each a sample's index: source and target of E edges. With
    two samples a (2, T) tensor is as likely a batch of token ids, so not then."""
    if value.dim() != 2 or int(value.shape[0]) != 2 or samples == 2:
        return False
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        return False
    if value.is_sparse:
        return False
    return value.numel() > 0 and 0 <= int(value.min()) and int(value.max()) < samples


def _compares_pairs(
    capture: forward_probes.ForwardCapture, base: torch.Tensor, i: int
) -> bool:
    """A (B, B) output whose entry (i, j) depends on samples i and j alone: changing
    sample j moves column j of row i and nothing else of it (a contrastive model's
    in-batch similarities). A leak moves the whole row."""
    samples = int(base.shape[0])
    if base.dim() != 2 or int(base.shape[1]) != samples:
        return False
    j = (i + 1) % samples
    output = _with_changed(capture, base, i, [j])
    if output is None:
        return False
    moved = ~torch.isclose(output[i], base[i], rtol=RTOL, atol=ATOL, equal_nan=True)
    return bool(moved[j]) and int(moved.sum()) == 1


def sample_indices(samples: int) -> list[int]:
    """The samples whose outputs are checked: the first, the second, the middle, the
    last."""
    return sorted({0, min(1, samples - 1), samples // 2, samples - 1})


def noise_floor(base: torch.Tensor, again: torch.Tensor) -> float:
    """How far two runs of the same batch are apart: the largest difference of any
    output (NaN equal to NaN)."""
    gap = (again.float() - base.float()).abs()
    gap = torch.where(torch.isnan(base) & torch.isnan(again), 0.0, gap)
    return float(gap.nan_to_num(nan=float("inf")).max()) if gap.numel() else 0.0


def _scale(output: torch.Tensor) -> float:
    finite = output.float()[torch.isfinite(output.float())]
    return float(finite.abs().max()) if finite.numel() else 0.0


def moved(now: torch.Tensor, before: torch.Tensor, floor: float) -> bool:
    """``now`` differs from ``before`` by more than float noise and well above the
    noise floor of two runs of one batch."""
    if floor == 0.0:
        return not _close(now, before)
    return noise_floor(before, now) > max(
        FLOOR_FACTOR * floor, ATOL + RTOL * _scale(before)
    )


def moves(
    capture: forward_probes.ForwardCapture,
    base: torch.Tensor,
    i: int,
    changed: list[int],
    floor: float = 0.0,
    skipped: list[str] | None = None,
) -> bool:
    """Whether sample i's output moves, above the noise floor, when the inputs of
    samples ``changed`` do (tensors inside a batch object changed on a copy; the types
    that cannot be copied go to ``skipped``)."""
    output = _with_changed(capture, base, i, changed, skipped)
    return output is not None and moved(output[i], base[i], floor)


def _with_changed(
    capture: forward_probes.ForwardCapture,
    base: torch.Tensor,
    i: int,
    changed: list[int],
    skipped: list[str] | None = None,
) -> torch.Tensor | None:
    """The output with the inputs of samples ``changed`` perturbed (None when the call
    raises or the output's shape changes)."""
    samples = int(base.shape[0])
    generator = torch.Generator().manual_seed(i)

    def change_tensor(value: torch.Tensor) -> torch.Tensor:
        return perturbed(value, samples, changed, generator)

    def change(value: Any) -> Any:
        return converted(value, change_tensor, [] if skipped is None else skipped)

    args = tuple(change(value) for value in capture.args)
    kwargs = {key: change(value) for key, value in capture.kwargs.items()}
    output = seeded_logits(capture, args, kwargs)
    if output is None or output.shape != base.shape:
        return None
    return output


def seeded_logits(
    capture: forward_probes.ForwardCapture, args: tuple, kwargs: dict
) -> torch.Tensor | None:
    """The model's per-sample output for these inputs, under one fixed seed (noise a
    model draws is the same at every call): its logits, or for a model that returns
    only its loss, its last linear layer's output. None when the call raises."""
    linear: list[torch.Tensor] = []

    def keep(module: Any, inputs: tuple, output: Any) -> None:
        if isinstance(output, torch.Tensor) and output.dim() >= 2:
            linear.append(output)

    handles = [
        module.register_forward_hook(keep)
        for module in capture.model.modules()
        if isinstance(module, torch.nn.Linear)
    ]
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(0)
            output = capture.model(*args, **kwargs)
    except Exception:
        return None
    finally:
        for handle in handles:
            handle.remove()
    logits = forward_probes.logits_of(output)
    if logits is None or logits.dim() < 2:
        return linear[-1] if linear else None
    return logits


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal within float noise, NaN equal to NaN."""
    return bool(torch.isclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True).all())


def _name_leak(
    capture: forward_probes.ForwardCapture,
    base: torch.Tensor,
    i: int,
    others: list[int],
    floor: float,
) -> int | None:
    candidates = [j for j in sample_indices(len(others) + 1) if j != i]
    candidates += [j for j in others if j not in candidates]
    for j in candidates[:NAMING_TRIES]:
        if moves(capture, base, i, [j], floor):
            return j
    return None


def perturbed(
    value: Any, samples: int, rows: list[int], generator: torch.Generator
) -> Any:
    """``value`` with the given samples' entries changed: floats get noise of their
    own scale, integers (token ids, class indices) become other values the tensor
    holds; anything without a batch dimension is left as it is."""
    if not isinstance(value, torch.Tensor) or value.dim() < 1:
        return value
    if int(value.shape[0]) != samples or value.dtype == torch.bool:
        return value
    changed = value.clone()
    index = torch.tensor(rows, device=value.device)
    part = changed[index]
    if value.is_floating_point():
        scale = float(value.float().std()) if value.numel() > 1 else 1.0
        noise = torch.randn(part.shape, generator=generator).to(part)
        changed[index] = part + noise * (scale if scale > 0 else 1.0)
        return changed
    if value.is_complex():
        return value
    present = torch.unique(value[value >= 0])
    if present.numel() < 2:
        return value
    position = torch.searchsorted(present, part.clamp(min=0))
    following = present[(position + 1) % present.numel()]
    changed[index] = torch.where(part >= 0, following, part)
    return changed
