"""What the session reads from the device and the process beside the trace: the
device's name, peak memory, the top operators, and on CUDA the GPU's facts and the
synchronizations at the project's source lines."""

from __future__ import annotations

import os
import platform
import resource
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from mlsmoke.overfit.training import instruments
from mlsmoke.overfit.training.device import device_kind
from mlsmoke.profile import phases, trace
from mlsmoke.profile.figures import Gpu, SyncPoint

TOP_OPS = 10


def sync_events() -> Any:
    """The profiler's cuda_sync events, where this torch has them."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        return _ExperimentalConfig(enable_cuda_sync_events=True)
    except (ImportError, TypeError):
        return None


@contextmanager
def sync_points(root: Path, cuda: bool) -> Iterator[dict[tuple[str, str], int]]:
    """Counts of CPU-GPU synchronizations by the project's source line, from
    torch.cuda.set_sync_debug_mode("warn") (which warns at each one)."""
    found: dict[tuple[str, str], int] = {}
    if not cuda:
        yield found
        return
    show = warnings.showwarning

    def record(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if "synchroniz" not in str(message):
            return show(message, category, *args, **kwargs)
        frame = project_frame(traceback.extract_stack(), root)
        if frame is not None:
            key = (f"{frame.filename}:{frame.lineno}", (frame.line or "").strip())
            found[key] = found.get(key, 0) + 1

    previous = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = record
        torch.cuda.set_sync_debug_mode("warn")
        try:
            yield found
        finally:
            torch.cuda.set_sync_debug_mode(previous)


def project_frame(
    stack: list[traceback.FrameSummary], root: Path
) -> traceback.FrameSummary | None:
    """The innermost frame of the project's own code under ``root``: not mlsmoke's,
    not an installed package's."""
    top = str(root.resolve())
    for frame in reversed(stack):
        name = os.path.abspath(frame.filename)
        if not name.startswith(top + os.sep) or instruments._in_package(name):
            continue
        if "site-packages" in name or "dist-packages" in name:
            continue
        return frame
    return None


def gpu_figures(
    device: str, measured: trace.Measured, syncs: dict[tuple[str, str], int], steps: int
) -> Gpu:
    index = torch.device(device).index or 0
    tf32 = bool(torch.backends.cuda.matmul.allow_tf32) or (
        torch.get_float32_matmul_precision() != "highest"
    )
    gpu = Gpu(
        name=torch.cuda.get_device_name(index),
        capability=list(torch.cuda.get_device_capability(index)),
        tf32=tf32,
        **measured.gpu,
    )
    gpu.syncs = [
        SyncPoint(where, code, count / max(steps, 1))
        for (where, code), count in sorted(syncs.items(), key=lambda kv: -kv[1])
    ]
    return gpu


def top_ops(profiler: Any, cuda: bool) -> list[dict[str, Any]]:
    rows = []
    for average in profiler.key_averages():
        name = average.key
        if name.startswith((phases.PREFIX, trace.STEP_PREFIX.rstrip("#"))):
            continue
        self_cpu = float(average.self_cpu_time_total)
        self_device = float(getattr(average, "self_device_time_total", 0.0) or 0.0)
        rows.append(
            {
                "name": name,
                "calls": int(average.count),
                "self_cpu_seconds": self_cpu / 1e6,
                "self_device_seconds": self_device / 1e6,
            }
        )
    key = "self_device_seconds" if cuda else "self_cpu_seconds"
    rows.sort(key=lambda row: -row[key])
    return rows[:TOP_OPS]


def synchronize(device: str) -> None:
    """Wait for the device's queued work: outside the steps only, to time them."""
    if device_kind(device) == "cuda":
        torch.cuda.synchronize(device)
    elif device_kind(device) == "mps":
        torch.mps.synchronize()


def cpu_count() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def peak_memory(device: str) -> tuple[int, str]:
    if device_kind(device) == "cuda":
        return int(torch.cuda.max_memory_allocated(device)), "tensors on the device"
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(kib) * 1024, "resident set of the process"


def device_name(device: str) -> str:
    if device_kind(device) == "cuda":
        return torch.cuda.get_device_name(torch.device(device).index or 0)
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{device_kind(device)}: {model or platform.processor() or platform.machine()}"
    )
