"""What users read: the live progress line, the loss sparkline and the verdict block.

Pure functions returning strings; ``main.py`` decides where they go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from typing import TYPE_CHECKING

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
    status = result.verdict.upper()
    cached = " (cached)" if result.cached else ""
    recipe = f" · {result.recipe}" if result.recipe else ""
    lines = [f"overfit {result.gate}: {status} {result.diagnosis.code}{cached}{recipe}"]
    if result.losses:
        lines.append(f"  loss    {sparkline(result.losses)}")
        target = "" if result.target is None else f"  target {result.target:.4g}"
        lines.append(
            f"  {_number(result.initial_loss)} -> {_number(result.final_loss)}"
            f"{target}  in {result.steps} steps, {result.device},"
            f" {result.seconds:.2f} s"
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


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def _indent(text: str, first: str, rest: str) -> str:
    head, *tail = text.splitlines() or [""]
    return "\n".join([first + head, *(rest + line for line in tail)])
