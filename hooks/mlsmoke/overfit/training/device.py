"""Devices: which one ``auto`` means, moving a batch there, and reading CUDA failures.

GPU work is asynchronous, so a CUDA error surfaces at a later call than the line that
caused it. :func:`classify_cuda_error` tells the errors worth a CPU re-run (device-side
assert, illegal memory access) from out-of-memory, which is reported with its figures.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from mlsmoke.overfit.training import batch_objects
from mlsmoke.overfit.training.evidence import (
    DEVICE_ASSERT,
    ILLEGAL_MEMORY_ACCESS,
    OUT_OF_MEMORY,
    ProjectProblem,
)

_CUDA_MESSAGES = {
    "device-side assert triggered": DEVICE_ASSERT,
    "illegal memory access": ILLEGAL_MEMORY_ACCESS,
    "misaligned address": ILLEGAL_MEMORY_ACCESS,
    "CUDA out of memory": OUT_OF_MEMORY,
}


def pick_device(requested: str, cuda: bool, mps: bool) -> str:
    """The device ``requested`` names, given which accelerators are available."""
    if requested == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    kind = requested.split(":")[0]
    if (kind == "cuda" and not cuda) or (kind == "mps" and not mps):
        raise ProjectProblem(
            "device-unavailable",
            f"device {requested!r} is not available here (torch {torch.__version__});"
            ' use device = "auto" to take it only when it is there',
            config_key="device",
        )
    return requested


def resolve_device(requested: str) -> str:
    """``requested`` resolved on this machine (``auto``: cuda, then mps, then cpu)."""
    mps = getattr(torch.backends, "mps", None)
    return pick_device(
        requested,
        cuda=torch.cuda.is_available(),
        mps=bool(mps and mps.is_available()),
    )


def device_kind(device: str) -> str:
    return device.split(":")[0]


def placement(device: str) -> torch.device:
    """The torch.device tensors go to (the seam the CUDA simulation tests replace)."""
    return torch.device(device)


def model_to(
    model: torch.nn.Module, device: str, dtype: torch.dtype
) -> torch.nn.Module:
    return model.to(placement(device), dtype)


def batch_to(
    batch: Any,
    device: str,
    dtype: torch.dtype | None,
    not_moved: list[str] | None = None,
    not_cast: list[str] | None = None,
) -> Any:
    """``batch`` on ``device`` (batch_objects.move); floating tensors also cast to
    ``dtype`` when given. Why an object in it stayed where it was (off the CPU) or kept
    its dtype is said in ``not_moved`` and ``not_cast``, one line per type."""
    target = placement(device)
    passed: list[str] = []
    moved = batch_objects.move(batch, target, passed)
    skipped: list[str] = []
    if dtype is not None:
        moved = batch_objects.converted(moved, _floats_to(dtype), skipped)
    if not_moved is not None and device_kind(device) != "cpu":
        not_moved += [_left_in_place(name) for name in dict.fromkeys(passed)]
    if not_cast is not None:
        not_cast += [_kept_dtype(name, dtype) for name in dict.fromkeys(skipped)]
    return moved


def _floats_to(dtype: torch.dtype) -> batch_objects.Convert:
    def cast(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.to(dtype) if tensor.is_floating_point() else tensor

    return cast


def _left_in_place(name: str) -> str:
    return (
        f"a {name} in the batch stayed where the batch callable put it: the gate moves"
        " tensors, dicts, lists, tuples, namedtuples, dataclasses and objects with a"
        f" .to(device) method, and a {name} is none of these; give it a .to(device)"
        " that returns it moved"
    )


def _kept_dtype(name: str, dtype: torch.dtype | None) -> str:
    return (
        f"the floating tensors inside a {name} keep their dtype, not"
        f" {str(dtype).replace('torch.', '')}: the gate could not write them back into"
        " a copy of it"
    )


# Below this many parameters, one CPU thread trains faster than several: measured on
# four small models (tests/overfit/overfit_models.py) on 2 busy cores, 1 thread took
# 0.05-0.18 s where 2 threads took 0.2-8.5 s (threads spin waiting for each other).
SINGLE_THREAD_BELOW = 2_000_000


def limit_cpu_threads(device: str, parameter_count: int) -> int | None:
    """Train a small model on one CPU thread, unless OMP_NUM_THREADS says otherwise;
    returns the previous thread count to restore, or None when nothing changed."""
    if device_kind(device) != "cpu" or parameter_count >= SINGLE_THREAD_BELOW:
        return None
    if os.environ.get("OMP_NUM_THREADS"):
        return None
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    return previous


def limit_cpu_threads_as_trained(one_thread: bool) -> int | None:
    """One CPU thread again after training on one: the diagnoses' probes and the
    checks run the same small model (forwards of the batch, re-runs), and on 2 busy
    cores they took 0.9-2.2 s on 2 threads against 0.1 s on one (the template's
    model). Returns the previous thread count, or None when nothing changed."""
    if not one_thread:
        return None
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    return previous


def restore_cpu_threads(previous: int | None) -> None:
    if previous is not None:
        torch.set_num_threads(previous)


def classify_cuda_error(error: BaseException) -> str | None:
    """DEVICE_ASSERT, ILLEGAL_MEMORY_ACCESS, OUT_OF_MEMORY, or None for other errors."""
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return OUT_OF_MEMORY
    if not isinstance(error, RuntimeError):
        return None
    text = str(error)
    for needle, kind in _CUDA_MESSAGES.items():
        if needle in text:
            return kind
    return None


def memory_figures(device: str) -> dict[str, int]:
    """Bytes allocated, reserved, free and total on a CUDA device (empty elsewhere)."""
    if device_kind(device) != "cuda":
        return {}
    figures: dict[str, int] = {}
    try:
        figures["allocated"] = int(torch.cuda.memory_allocated(device))
        figures["reserved"] = int(torch.cuda.memory_reserved(device))
        figures["peak"] = int(torch.cuda.max_memory_allocated(device))
        free, total = torch.cuda.mem_get_info(device)
        figures["free"], figures["total"] = int(free), int(total)
    except (RuntimeError, AssertionError):  # a broken context still gives what it can
        pass
    return figures


def release_cuda_memory(device: str) -> None:
    if device_kind(device) == "cuda":
        try:
            torch.cuda.empty_cache()
        except RuntimeError:
            pass
