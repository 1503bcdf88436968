"""What a sequence model's output at a position is shown to read, by intervention on
its inputs (the positions of the fields aligned with its targets):

- prefixes: changing every later position leaves each earlier output as it was,
  while the later outputs move (checked at the first position and the middle one);
- its window: the fewest trailing positions the output at the last position reads.
  A binary search on how far back changing the inputs still moves it, any detectable
  movement counting as reading, then confirmed at the middle position, from where
  every later output must stay as it was;
- its position: the inputs shifted one position on give, at each position whose
  window they fill, the output the unshifted inputs gave one position earlier, or
  the position is read.

A forward that raises is no evidence and counts as a move (a longer window, the
position read), and an output that no change of its inputs moves shows nothing of
what it reads: its window is the whole prefix. The forwards: one to compare with,
two for prefixes, about log2(length + 1) for the window, one to confirm it and one
for the position."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch

# An output that moved less than this share of its largest value did not move.
UNMOVED = 1e-5

Edit = Callable[[torch.Tensor], torch.Tensor]
# The model's logits (B, T, ...) with an edit made to each aligned input; None when
# the model's own forward raised.
Outputs = Callable[[Edit], torch.Tensor | None]


class Reading(NamedTuple):
    window: int | None  # trailing positions read at each position; None: all
    positional: bool  # whether the position itself is read


PREFIXES = Reading(window=None, positional=True)


def described(reading: Reading) -> str:
    """What ``reading`` says each output reads, for a user."""
    if reading.window is None:
        return "the prefix up to each position"
    where = "and the position" if reading.positional else "at any position"
    return f"the last {reading.window} input position(s), {where}"


def measured_reading(outputs: Outputs, length: int) -> Reading | None:
    """What the output at each of ``length`` positions is shown to read; None where
    it is not shown to read only up to its position."""
    before = outputs(lambda tensor: tensor)
    if before is None or length < 2 or before.dim() < 2:
        return None
    probe = _Probe(outputs, before)
    if not _reads_prefixes(probe, length):
        return None
    window = _window(probe, length)
    if window is None:
        return PREFIXES
    return Reading(window, positional=not _same_one_position_on(probe, window))


class _Probe:
    """Whether an edit moves the outputs at chosen positions, against ``before``."""

    def __init__(self, outputs: Outputs, before: torch.Tensor) -> None:
        self.outputs, self.before = outputs, before
        self.scale = UNMOVED * (1.0 + float(before.abs().max()))

    def moved(self, edit: Edit, *positions: slice) -> list[float] | None:
        """The largest move of the outputs at each of ``positions`` in one forward;
        None: no evidence."""
        after = self.outputs(edit)
        if after is None or after.shape != self.before.shape:
            return None
        moves = [(after[:, part] - self.before[:, part]).abs() for part in positions]
        if not all(bool(torch.isfinite(move).all()) for move in moves):
            return None  # a NaN compares as unmoved and as moved alike
        return [float(move.max()) for move in moves]


def _reads_prefixes(probe: _Probe, length: int) -> bool:
    for cut in sorted({1, length // 2}):
        moved = probe.moved(changed(cut, length), slice(0, cut), slice(cut, length))
        if moved is None:
            return False
        earlier, later = moved
        if earlier > probe.scale or later <= 100 * probe.scale:
            return False
    return True


def _window(probe: _Probe, length: int) -> int | None:
    """The fewest trailing positions the last output reads, confirmed at the middle;
    None: the whole prefix, or a window not shown."""
    last = slice(length - 1, length)

    def unmoved(window: int) -> bool:
        moved = probe.moved(changed(0, length - window), last)
        return moved is not None and moved[0] <= probe.scale

    low, high = 0, length  # a window of ``length`` changes nothing: unmoved
    while low < high:
        middle = (low + high) // 2
        if unmoved(middle):
            high = middle
        else:
            low = middle + 1
    if low == 0 or low >= length:
        return None  # reads nothing of its inputs, or all of them
    return low if _confirmed(probe, low, length) else None


def _confirmed(probe: _Probe, window: int, length: int) -> bool:
    """Every output from the middle position on (or from the first that a window
    leaves something before) stays as it was when all before its window changes."""
    start = max(window, length // 2)
    if start >= length - 1:
        return True  # the last position, where the window was measured
    moved = probe.moved(changed(0, start - window + 1), slice(start, length))
    return moved is not None and moved[0] <= probe.scale


def _same_one_position_on(probe: _Probe, window: int) -> bool:
    length = probe.before.shape[1]
    if window >= length:
        return False
    after = probe.outputs(shifted)
    if after is None or after.shape != probe.before.shape:
        return False
    here = after[:, window:length]
    earlier = probe.before[:, window - 1 : length - 1]
    return float((here - earlier).abs().max()) <= probe.scale


def changed(start: int, stop: int) -> Edit:
    """An edit that changes every value at positions ``start:stop``: floats get
    noise, flags flip, ids become another id between the tensor's least and
    largest."""
    generator = torch.Generator().manual_seed(0)

    def change(tensor: torch.Tensor) -> torch.Tensor:
        edited = tensor.clone()
        part = edited[:, start:stop]
        if tensor.dtype == torch.bool:
            edited[:, start:stop] = ~part
            return edited
        if tensor.is_floating_point():
            noise = torch.randn(part.shape, generator=generator)
            edited[:, start:stop] = part + noise.to(part)
            return edited
        low = int(tensor.min())
        span = max(int(tensor.max()) - low + 1, 2)  # one value: the next id
        step = torch.randint(1, span, part.shape, generator=generator)
        edited[:, start:stop] = ((part.cpu() - low + step) % span + low).to(part)
        return edited

    return change


def shifted(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` one position on, its first position held twice."""
    return torch.cat([tensor[:, :1], tensor[:, :-1]], dim=1)
