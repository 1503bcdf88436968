"""The terminal summary of one profile: throughput, the model, the step split and the
profiler's own share of it, the CPU threads, the device, the top operators, peak
memory, then the recommendations (none: nothing is said)."""

from __future__ import annotations

from mlsmoke.profile.figures import Figures, Threads
from mlsmoke.profile.phases import LABELS
from mlsmoke.profile.rules import Recommendation, percent

TOP_OPS_SHOWN = 5
OPEN_TRACE = "open it at https://ui.perfetto.dev (or chrome://tracing)"
# Past this share of the profiled step, the profiler's own cost (a few µs an operator)
# is most of what the split measures: small ops look slower than they run.
UNTRUSTED_OVERHEAD = 0.5


def summary(figures: Figures, recommendations: list[Recommendation], trace: str) -> str:
    lines = [f"profile {figures.gate}: {_headline(figures)}"]
    lines += _model_lines(figures)
    lines.append(
        f"  {figures.steps} steps profiled after {figures.warmup} warm-up, on"
        f" {figures.device} ({figures.device_name}); {figures.loader.kind}"
        + _loader_settings(figures)
    )
    lines.append(
        f"  step split (profiled step {_ms(figures.step_seconds)},"
        f" {figures.profiled_steps_per_second:.1f} steps/s under the profiler):"
    )
    for phase, seconds in figures.split.items():
        share = figures.share(phase)
        bar = "#" * round(share * 30)
        line = (
            f"    {LABELS.get(phase, phase):<15}{_ms(seconds):>11}  {percent(share):>4}"
        )
        lines.append(f"{line}  {bar}" if bar else line)
    if figures.data_from:
        lines.append(f"    (data wait: {figures.data_from})")
    lines += overhead_lines(figures)
    lines += thread_lines(figures.threads)
    lines += _gpu_lines(figures)
    if figures.top_ops:
        device = figures.gpu is not None
        key = "self_device_seconds" if device else "self_cpu_seconds"
        lines.append(
            f"  top operators by self {'device' if device else 'CPU'} time, per step:"
        )
        rows = figures.top_ops[:TOP_OPS_SHOWN]
        width = max(len(row["name"]) for row in rows) + 2
        for row in rows:
            per_step = row[key] / max(figures.steps, 1)
            calls = row["calls"] / max(figures.steps, 1)
            lines.append(
                f"    {row['name']:<{width}}{_ms(per_step):>9}  {calls:g} calls"
            )
    lines.append(
        f"  peak memory: {figures.peak_memory_bytes / 2**20:,.0f} MiB"
        f" ({figures.peak_memory_of})"
    )
    if recommendations:
        lines.append("  recommendations:")
        for found in recommendations:
            lines.append(f"    [{found.rule}] {found.measured}")
            lines.append(f"      change: {found.change}")
    lines.append(f"  trace: {trace} ({OPEN_TRACE})")
    return "\n".join(lines)


def _headline(figures: Figures) -> str:
    text = f"{figures.steps_per_second:.2f} steps/s"
    samples = figures.samples_per_second
    if samples is not None:
        forwards = figures.forwards_per_step
        batch = f"batch {figures.batch_size}"
        if forwards > 1:
            batch += f" x {forwards} micro-batches a step"
        text += f", {samples:,.0f} samples/s ({batch})"
    tokens = figures.tokens_per_second
    if tokens is not None:
        text += f", {tokens:,.0f} tokens/s ({figures.tokens_per_step:,} a step)"
    return text


def _model_lines(figures: Figures) -> list[str]:
    lines = []
    if figures.script:
        lines.append(f"  script: {figures.script}")
    model = figures.model
    if model is not None:
        where = f" ({model.where})" if model.where else ""
        lines.append(f"  model: {model.name}{where}, {model.parameters:,} parameters")
    return lines


def overhead_lines(figures: Figures) -> list[str]:
    """The profiler's own cost, and when it is most of the step, what to do."""
    if figures.step_seconds <= 0 or figures.steps_per_second <= 0:
        return []
    share = figures.profiler_overhead_share
    lines = [
        f"  profiler overhead: {_ms(figures.profiler_overhead_seconds)} a step,"
        f" {percent(share)} of the profiled step (unprofiled"
        f" {_ms(1 / figures.steps_per_second)})"
    ]
    if share > UNTRUSTED_OVERHEAD:
        lines.append(
            "  the split is not trustworthy: the profiler's own cost is more than"
            f" {percent(UNTRUSTED_OVERHEAD)} of the profiled step, and falls on each"
            " operator, so small ops look slower than they run. For a split to"
            " trust, profile a step with more work in each operator (the real model"
            " size and batch, not a smoke-test config) and more --steps; the"
            " steps/s above are unprofiled and hold"
        )
    return lines


def thread_lines(threads: Threads | None) -> list[str]:
    if threads is None:
        return []
    default = (
        f"  CPU threads: {_ms(threads.default_step_seconds)} a step on"
        f" {_count(threads.default)} (this process's)"
    )
    ratio = threads.other_is_faster_by
    if threads.other is None or threads.other_step_seconds is None or not ratio:
        return [default + "; no other count to compare on this machine"]
    faster = f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"
    return [
        f"{default}, {_ms(threads.other_step_seconds)} on {_count(threads.other)}"
        f" ({faster})"
    ]


def _count(threads: int) -> str:
    return "1 thread" if threads == 1 else f"{threads} threads"


def _loader_settings(figures: Figures) -> str:
    loader = figures.loader
    parts = [
        f"{name}={value}"
        for name, value in (
            ("batch_size", loader.batch_size),
            ("num_workers", loader.num_workers),
            ("pin_memory", loader.pin_memory),
        )
        if value is not None
    ]
    return f" ({', '.join(parts)})" if parts else ""


def _gpu_lines(figures: Figures) -> list[str]:
    gpu = figures.gpu
    if gpu is None:
        return []
    lines = [
        f"  GPU utilization {percent(gpu.utilization)}: {gpu.kernels_per_step:g}"
        f" kernels a step, median {gpu.median_kernel_us:.1f} µs; idle"
        f" {_ms(gpu.idle_seconds)} a step in {gpu.idle_gaps:g} gaps (longest"
        f" {_ms(gpu.longest_gap_seconds)})"
    ]
    if gpu.syncs:
        lines.append("  CPU-GPU synchronizations inside the step:")
        lines += [
            f"    {sync.where}: {sync.code} ({sync.per_step:g}x a step)"
            for sync in gpu.syncs
        ]
    elif gpu.sync_events_per_step:
        lines.append(
            f"  {gpu.sync_events_per_step:g} synchronizing calls a step, none at a"
            " line of the project"
        )
    return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"
