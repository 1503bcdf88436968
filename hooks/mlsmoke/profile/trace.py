"""Figures from the events of a Chrome trace that ``torch.profiler`` exported.

The step windows are the profiler's ``ProfilerStep#N`` ranges, the phases the
``mlsmoke/<phase>`` ranges the session opens (``phases.py``). On CUDA the device's
events come from the same file: kernels (``kernel``), copies (``gpu_memcpy``), the
runtime calls that launched them (``cuda_runtime``, joined by ``correlation``) and
synchronizations (``cuda_sync``, ``cudaStreamSynchronize`` ...). Pure functions: the
tests feed them recorded and constructed events alike.
"""

from __future__ import annotations

import bisect
import gzip
import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.profile.phases import OTHER, PHASES, ZERO_GRAD, phase_of, range_name

STEP_PREFIX = "ProfilerStep#"
# A gap between device work at least this long is idle time (µs). Holistic Trace
# Analysis counts launch delays over 100 µs; a launch takes 5-20 µs, so a gap of 50
# is the device waiting for the host, not the next launch in flight.
IDLE_GAP_US = 50.0
# Runtime calls that block the host until the device is done (HTA's critical path).
SYNC_CALLS = frozenset(
    {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaMemcpy",
    }
)
RUNTIME_CATS = frozenset({"cuda_runtime", "cuda_driver"})
DEVICE_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
# On CUDA, kineto repeats each user range on the device's timeline: not the host's.
DEVICE_RANGE_CATS = frozenset({"gpu_user_annotation"})
MATMUL_OPS = frozenset(
    {
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::cudnn_convolution",
        "aten::_convolution",
        "aten::_scaled_mm",
    }
)
FLOAT32 = "float"
REDUCED = frozenset({"c10::Half", "c10::BFloat16"})
ZERO_FILLS = frozenset({"aten::zero_", "aten::fill_"})


@dataclass(frozen=True)
class Span:
    name: str
    cat: str
    start: float  # µs
    end: float
    tid: Any
    args: dict[str, Any]

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass
class Measured:
    """What the trace says, per profiled step (seconds)."""

    steps: int
    step_seconds: float
    split: dict[str, float]
    zero_grad_fills: float
    gpu: dict[str, Any] = field(default_factory=dict)  # Gpu's measured fields


def load_events(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as stream:
        data = json.load(stream)
    return data["traceEvents"] if isinstance(data, dict) else data


def spans(events: Iterable[dict[str, Any]]) -> list[Span]:
    """The complete events ("ph": "X"), in start order."""
    found = []
    for event in events:
        if event.get("ph") != "X" or "dur" not in event:
            continue
        start = float(event["ts"])
        found.append(
            Span(
                str(event.get("name", "")),
                str(event.get("cat", "")),
                start,
                start + float(event["dur"]),
                event.get("tid"),
                event.get("args") or {},
            )
        )
    return sorted(found, key=lambda span: (span.start, -span.end))


def measure(events: Iterable[dict[str, Any]]) -> Measured:
    found = spans(events)
    host = [s for s in found if s.cat not in DEVICE_RANGE_CATS]
    steps = [s for s in host if s.name.startswith(STEP_PREFIX)]
    marked = [s for s in host if phase_of(s.name) is not None]
    if not steps and marked:  # no schedule: the run is one step
        steps = [Span("run", "", marked[0].start, max(s.end for s in marked), None, {})]
    count = max(len(steps), 1)
    step_seconds = sum(s.duration for s in steps) / count / 1e6
    windows = _Windows(steps)
    split = {phase: 0.0 for phase in PHASES}
    for span in marked:
        phase = phase_of(span.name)
        if phase in split and windows.holds(span.start):
            split[phase] += span.duration / count / 1e6
    split[OTHER] = max(step_seconds - sum(split.values()), 0.0)
    zero_grad = [s for s in marked if s.name == range_name(ZERO_GRAD)]
    fills = sum(
        1
        for s in found
        if s.cat == "cpu_op" and s.name in ZERO_FILLS and _inside(s, zero_grad)
    )
    measured = Measured(len(steps), step_seconds, split, fills / count)
    if any(s.cat in DEVICE_CATS for s in found):
        measured.gpu = _device_figures(found, steps, windows, count)
    return measured


class _Windows:
    """The step windows, for "does this time fall in a step"."""

    def __init__(self, steps: list[Span]) -> None:
        self.starts = [s.start for s in steps]
        self.ends = [s.end for s in steps]

    def holds(self, time: float) -> bool:
        i = bisect.bisect_right(self.starts, time) - 1
        return i >= 0 and time <= self.ends[i]


def _inside(span: Span, ranges: list[Span]) -> bool:
    return any(r.tid == span.tid and r.start <= span.start <= r.end for r in ranges)


def innermost(parents: list[Span], children: list[Span]) -> dict[int, Span]:
    """For each child (by index), the innermost parent on its thread whose interval
    holds the child's start: one sweep over both, in start order."""
    found: dict[int, Span] = {}
    stacks: dict[Any, list[Span]] = {}
    order = [(p.start, 0, i) for i, p in enumerate(parents)]
    order += [(c.start, 1, i) for i, c in enumerate(children)]
    order.sort(
        key=lambda item: (
            item[0],
            item[1],
            -parents[item[2]].end if item[1] == 0 else 0,
        )
    )
    for time, kind, i in order:
        tid = parents[i].tid if kind == 0 else children[i].tid
        stack = stacks.setdefault(tid, [])
        while stack and stack[-1].end < time:
            stack.pop()
        if kind == 0:
            stack.append(parents[i])
        elif stack:
            found[i] = stack[-1]
    return found


def _device_figures(
    found: list[Span], steps: list[Span], windows: _Windows, count: int
) -> dict[str, Any]:
    runtime = [s for s in found if s.cat in RUNTIME_CATS]
    in_steps = [r for r in runtime if windows.holds(r.start)]
    launched = {r.args.get("correlation"): r for r in in_steps}
    device = [
        s
        for s in found
        if s.cat in DEVICE_CATS and s.args.get("correlation") in launched
    ]
    kernels = [s for s in device if s.cat == "kernel"]
    phase_ranges = [
        s
        for s in found
        if phase_of(s.name) in PHASES and s.cat not in DEVICE_RANGE_CATS
    ]
    phase_of_call = innermost(phase_ranges, in_steps)
    ops = [s for s in found if s.cat == "cpu_op"]
    op_of_call = innermost(ops, in_steps)
    call_index = {id(r): i for i, r in enumerate(in_steps)}

    def launcher(event: Span) -> int:
        return call_index[id(launched[event.args.get("correlation")])]

    optimizer_kernels = sum(
        1 for k in kernels if _phase(phase_of_call.get(launcher(k))) == "optimizer_step"
    )
    fp32_matmul = sum(
        k.duration
        for k in kernels
        if _input_type(op_of_call.get(launcher(k))) == FLOAT32
    )
    copies = [s for s in device if s.cat == "gpu_memcpy" and "HtoD" in s.name]
    pageable = sum(c.duration for c in copies if "Pageable" in c.name)
    start = min([steps[0].start] + [s.start for s in device]) if steps else 0.0
    end = max([steps[-1].end] + [s.end for s in device]) if steps else 0.0
    busy = _merged((s.start, s.end) for s in device)
    gaps = [b[0] - a[1] for a, b in zip(busy, busy[1:]) if b[0] - a[1] >= IDLE_GAP_US]
    for edge in (busy[0][0] - start, end - busy[-1][1]) if busy else ():
        if edge >= IDLE_GAP_US:
            gaps.append(edge)
    busy_time = sum(b - a for a, b in busy)
    syncs = [
        s
        for s in found
        if (s.cat == "cuda_sync" or (s.cat in RUNTIME_CATS and s.name in SYNC_CALLS))
        and windows.holds(s.start)
    ]
    reduced = sum(
        1 for op in ops if op.name in MATMUL_OPS and _input_type(op) in REDUCED
    )
    window = max(end - start, 1e-9)
    return {
        "utilization": min(busy_time / window, 1.0),
        "idle_gaps": len(gaps) / count,
        "idle_seconds": sum(gaps) / count / 1e6,
        "longest_gap_seconds": max(gaps, default=0.0) / 1e6,
        "kernels_per_step": len(kernels) / count,
        "median_kernel_us": (
            statistics.median([k.duration for k in kernels]) if kernels else 0.0
        ),
        "optimizer_kernels_per_step": optimizer_kernels / count,
        "h2d_copies_per_step": len(copies) / count,
        "pageable_h2d_seconds": pageable / count / 1e6,
        "fp32_matmul_seconds": fp32_matmul / count / 1e6,
        "reduced_precision_matmuls": reduced,
        "sync_events_per_step": len(syncs) / count,
    }


def _phase(span: Span | None) -> str | None:
    return None if span is None else phase_of(span.name)


def _input_type(op: Span | None) -> str | None:
    """The element type of a matmul op's first tensor input, from record_shapes."""
    if op is None or op.name not in MATMUL_OPS:
        return None
    types = op.args.get("Input type") or []
    return next((t for t in types if t and t != "Scalar"), None)


def _merged(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
