"""Bands for a float field's mean and standard deviation, per channel (dimension 1:
an image's colour channels, a table's columns) where it has them.

- mean: the recorded batch means, widened by the factor times their spread, at least
  half a recorded std (a new seed or a larger batch moves a batch mean by a fraction of
  a std; a missing or doubled normalization by orders of magnitude);
- std: from the smallest recorded std divided by the factor to the largest times it.

A label field (one column per class) has none: its columns' figures are how often
each class happened to be drawn (``label_width`` covers it).
"""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import (
    Failure,
    Observed,
    elements,
    margin,
    rounded,
    shown,
    smaller_sample,
    spread,
)
from mlsmoke.expect.mechanisms import standardization_change

KIND = "mean_std"
REQUIRED = ("field", "mean", "std")


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        per_batch = _per_channel(observed, name)
        if per_batch is None or not observed.everywhere(name):
            continue
        if observed.is_label_field(name):
            continue
        means, stds = per_batch
        bands = [_bands(m, s, factor) for m, s in zip(zip(*means), zip(*stds))]
        entry = {
            "kind": KIND,
            "field": name,
            "mean": [b[0] for b in bands],
            "std": [b[1] for b in bands],
            "from": _figure(means, stds),
        }
        if len(bands) > 1:
            entry["per"] = "channel"
        shapes = observed.series(name, "shape")
        entry["count"] = min(elements(s, len(bands) > 1) for s in shapes)
        found.append(entry)
    return found


def _per_channel(observed: Observed, name: str) -> tuple[list, list] | None:
    """Per batch, the means and stds of each channel (one channel: the field)."""
    channels = observed.series(name, "channels")
    if channels and len({len(c["mean"]) for c in channels}) == 1:
        return [c["mean"] for c in channels], [c["std"] for c in channels]
    means, stds = observed.series(name, "mean"), observed.series(name, "std")
    if not means or not stds:
        return None
    return [[m] for m in means], [[s] for s in stds]


def _bands(means: tuple, stds: tuple, factor: float) -> tuple[list, list | None]:
    width = margin([spread(means)], 0.5 * sum(stds) / len(stds), factor)
    mean_band = [rounded(min(means) - width), rounded(max(means) + width)]
    if min(stds) <= 0:
        return mean_band, None  # a constant channel: constant_feature's to watch
    return mean_band, [rounded(min(stds) / factor), rounded(max(stds) * factor)]


def _widened(band: list, wider: float) -> tuple[float, float]:
    center, half = (band[0] + band[1]) / 2, (band[1] - band[0]) / 2
    return center - half * wider, center + half * wider


def _figure(means: list, stds: list) -> str:
    first_mean = [shown(m) for m in means[0][:4]]
    first_std = [shown(s) for s in stds[0][:4]]
    more = ", ..." if len(means[0]) > 4 else ""
    return (
        f"batch 0 mean {', '.join(first_mean)}{more}; std {', '.join(first_std)}"
        f"{more}; {len(means)} batches"
    )


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name = expectation["field"]
    for index, figures in observed.figures(name):
        channels = figures.get("channels")
        if channels and len(channels["mean"]) == len(expectation["mean"]):
            means, stds = channels["mean"], channels["std"]
        elif len(expectation["mean"]) == 1 and "mean" in figures:
            means, stds = [figures["mean"]], [figures["std"]]
        else:
            continue  # the shape changed: shape reports it
        per_channel = expectation.get("per") == "channel"
        count = elements(figures["shape"], per_channel)
        wider = smaller_sample(expectation.get("count", 0), count)
        failure = _first_outside(expectation, means, stds, name, index, wider)
        if failure is not None:
            return [failure]
    return []


def _first_outside(
    expectation: dict[str, Any],
    means: list,
    stds: list,
    name: str,
    index: int,
    wider: float = 1.0,
) -> Failure | None:
    where = "channel {} " if expectation.get("per") == "channel" else ""
    for channel, (mean, std) in enumerate(zip(means, stds)):
        mean_band, std_band = expectation["mean"][channel], expectation["std"][channel]
        label = where.format(channel)
        low_mean, high_mean = _widened(mean_band, wider)
        if std_band is not None and wider > 1:
            # a std of few values falls far lower by chance than it rises
            std_band = [std_band[0] / wider**2, std_band[1] * wider]
        if not low_mean <= mean <= high_mean or (
            std_band is not None and not std_band[0] <= std <= std_band[1]
        ):
            recorded_mean = (low_mean + high_mean) / 2
            recorded_std = (std_band[0] * std_band[1]) ** 0.5 if std_band else 0.0
            return Failure(
                name,
                KIND,
                f"{label}mean {shown(low_mean)}..{shown(high_mean)}"
                + (
                    f", std {shown(std_band[0])}..{shown(std_band[1])}"
                    if std_band
                    else ""
                ),
                f"{label}mean {shown(mean)}, std {shown(std)}",
                index,
                mechanism=standardization_change(
                    recorded_mean, recorded_std, mean, std
                ),
            )
    return None
