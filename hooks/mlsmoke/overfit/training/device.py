"""Devices: which one ``auto`` means, moving a batch there, and reading CUDA failures.

GPU work is asynchronous, so a CUDA error surfaces at a later call than the line that
caused it. :func:`classify_cuda_error` tells the errors worth a CPU re-run (device-side
assert, illegal memory access) from out-of-memory, which is reported with its figures.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import torch

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


def map_tensors(obj: Any, convert: Callable[[torch.Tensor], Any]) -> Any:
    """``obj`` with every tensor inside it converted, through tuples, lists, dicts,
    namedtuples and dataclasses; anything else is returned as it is."""
    if isinstance(obj, torch.Tensor):
        return convert(obj)
    if isinstance(obj, dict):
        return type(obj)({k: map_tensors(v, convert) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(map_tensors(v, convert) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(map_tensors(v, convert) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {
            f.name: map_tensors(getattr(obj, f.name), convert)
            for f in dataclasses.fields(obj)
            if f.init
        }
        return dataclasses.replace(obj, **changes)
    if hasattr(obj, "items") and hasattr(
        obj, "keys"
    ):  # e.g. transformers' BatchEncoding
        try:
            return type(obj)({k: map_tensors(v, convert) for k, v in obj.items()})
        except TypeError:
            return {k: map_tensors(v, convert) for k, v in obj.items()}
    return obj


def tensors_in(obj: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    map_tensors(obj, lambda tensor: found.append(tensor) or tensor)
    return found


def batch_to(batch: Any, device: str, dtype: torch.dtype | None) -> Any:
    """``batch`` on ``device``; floating tensors also cast to ``dtype`` when given."""
    target = placement(device)

    def convert(tensor: torch.Tensor) -> torch.Tensor:
        if dtype is not None and tensor.is_floating_point():
            return tensor.to(target, dtype)
        return tensor.to(target)

    return map_tensors(batch, convert)


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
