"""What users read: the live progress line, the loss sparkline and the verdict block.

Pure functions returning strings; ``main.py`` decides where they go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from typing import TYPE_CHECKING

from mlsmoke.overfit.process.settings import DEFAULT_TIER

if TYPE_CHECKING:
    from mlsmoke.overfit.verdict.result import Result

BARS = "▁▂▃▄▅▆▇█"
NONFINITE = "!"
SPARK_WIDTH = 40


def sparkline(values: Sequence[float], width: int = SPARK_WIDTH) -> str:
    """``values`` as at most ``width`` bars, on a log scale when they span a decade
    (a memorizing loss falls exponentially); non-finite values show as ``!``."""
    if not values:
        return ""
    points = _downsample(values, width)
    finite = [v for v in points if math.isfinite(v)]
    if not finite:
        return NONFINITE * len(points)
    logarithmic = min(finite) > 0 and max(finite) / min(finite) >= 10
    scale = math.log if logarithmic else float
    low, high = scale(min(finite)), scale(max(finite))
    span = high - low
    bars = []
    for value in points:
        if not math.isfinite(value):
            bars.append(NONFINITE)
        elif span == 0:
            bars.append(BARS[len(BARS) // 2])
        else:
            level = (scale(value) - low) / span
            bars.append(BARS[min(int(level * len(BARS)), len(BARS) - 1)])
    return "".join(bars)


def _downsample(values: Sequence[float], width: int) -> list[float]:
    """At most ``width`` values, keeping the first and the last."""
    if len(values) <= width:
        return list(values)
    step = (len(values) - 1) / (width - 1)
    return [values[round(i * step)] for i in range(width)]


def progress_line(
    gate: str, step: int, max_steps: int, loss: float, rate: float
) -> str:
    speed = f"  {rate:.0f} steps/s" if rate > 0 else ""
    return f"overfit {gate}: step {step}/{max_steps}  loss {loss:.4g}{speed}"


def verdict_block(result: Result) -> str:
    """The result as users read it: verdict, curve, figures, then why and what to do."""
    lines = [headline(result)]
    losses, first, last, target, steps = _curve(result)
    if losses:
        curves = [] if result.diagnosis.losses else result.rank_losses
        if curves_differ(curves):
            lines += [
                f"  rank {rank:<3} {sparkline(curve)}  {_span(curve)}"
                for rank, curve in enumerate(curves)
            ]
        else:
            lines.append(f"  loss    {sparkline(losses)}")
        target_text = "" if target is None else f"  target {target:.4g}"
        lines.append(
            f"  {_number(first)} -> {_number(last)}{target_text}  in {steps} steps,"
            f" {result.device}, {result.seconds:.2f} s"
        )
    lines.append(_indent(result.diagnosis.summary, "  ", "  "))
    lines += [_indent(item, "    - ", "      ") for item in result.diagnosis.evidence]
    if result.diagnosis.suggestions:
        lines.append("  try:")
        lines += [f"    - {item}" for item in result.diagnosis.suggestions]
    for warning in result.warnings:
        lines.append(
            _indent(f"warning {warning.code}: {warning.message}", "  ", "    ")
        )
    return "\n".join(lines)


def curves_differ(curves: Sequence[Sequence[float]]) -> bool:
    """Whether the ranks' loss curves differ (each rank then gets its own line); ranks
    fed the same batch by the same weights agree to the last bits."""
    first, *others = curves or [[]]
    return any(
        len(curve) != len(first)
        or not all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(curve, first))
        for curve in others
    )


def _span(curve: Sequence[float]) -> str:
    if not curve:
        return "no loss"
    return f"{_number(curve[0])} -> {_number(curve[-1])} in {len(curve) - 1} steps"


def _curve(
    result: Result,
) -> tuple[list[float], float | None, float | None, float | None, int]:
    """The losses to draw, first, last, target and steps: the run the diagnosis is
    about (a probe's, when it carries one), else the gate's own."""
    probe = result.diagnosis.losses
    if probe:
        steps = result.diagnosis.steps
        return (
            probe,
            probe[0],
            probe[-1],
            None,
            len(probe) - 1 if steps is None else steps,
        )
    return (
        result.losses,
        result.initial_loss,
        result.final_loss,
        result.target,
        result.steps,
    )


def headline(result: Result) -> str:
    """``overfit GATE: VERDICT code``, with the tier when it is not the commit tier (a
    pass at one tier says nothing of another), whether it came from the cache, and the
    optimizer and lr that trained."""
    status = result.verdict.upper()
    tier = "" if result.tier in ("", DEFAULT_TIER) else f" at tier {result.tier}"
    cached = " (cached)" if result.cached else ""
    recipe = f" · {result.recipe}" if result.recipe else ""
    return (
        f"overfit {result.gate}: {status} {result.diagnosis.code}{tier}{cached}{recipe}"
    )


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def _indent(text: str, first: str, rest: str) -> str:
    head, *tail = text.splitlines() or [""]
    return "\n".join([first + head, *(rest + line for line in tail)])
