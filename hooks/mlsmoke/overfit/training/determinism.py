"""Seeds and deterministic settings for one training run, restored afterwards.

Restoring matters for the Python API and the pytest plugin, which run inside the user's
own process: a memorization test must not change the RNG streams of the tests after it.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def deterministic(seed: int) -> Iterator[None]:
    """Seed Python, torch and numpy (when the project uses it) and ask torch for
    deterministic algorithms where it has them; undo all of it on exit."""
    # cuBLAS reads this before its first use; without it deterministic matmuls raise.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    numpy = sys.modules.get("numpy")
    python_state = random.getstate()
    numpy_state = numpy.random.get_state() if numpy is not None else None
    flags = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
    )
    with torch.random.fork_rng(devices=_cuda_devices()):
        random.seed(seed)
        torch.manual_seed(seed)
        if numpy is not None:
            numpy.random.seed(seed)
        _use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        try:
            yield
        finally:
            random.setstate(python_state)
            if numpy is not None:
                numpy.random.set_state(numpy_state)
            _use_deterministic_algorithms(flags[0], warn_only=flags[1])
            torch.backends.cudnn.deterministic = flags[2]
            torch.backends.cudnn.benchmark = flags[3]


RandomState = tuple  # Python's, torch's (CPU and CUDA) and numpy's generator states


def random_state() -> RandomState:
    """Every generator's state, to replay the draws made from here."""
    numpy = sys.modules.get("numpy")
    return (
        random.getstate(),
        torch.random.get_rng_state(),
        _cuda_states(),
        numpy.random.get_state() if numpy is not None else None,
    )


def restore_random_state(state: RandomState) -> None:
    python, cpu, cuda, numpy_state = state
    random.setstate(python)
    torch.random.set_rng_state(cpu)
    if cuda:
        torch.cuda.set_rng_state_all(cuda)
    numpy = sys.modules.get("numpy")
    if numpy is not None and numpy_state is not None:
        numpy.random.set_state(numpy_state)


def same_random_state(a: RandomState, b: RandomState) -> bool:
    """No random number was drawn between the two states."""
    if a[0] != b[0] or not torch.equal(a[1], b[1]):
        return False
    if len(a[2]) != len(b[2]) or not all(map(torch.equal, a[2], b[2])):
        return False
    if (a[3] is None) != (b[3] is None):
        return False
    return a[3] is None or (a[3][2:] == b[3][2:] and bool((a[3][1] == b[3][1]).all()))


def _cuda_states() -> list[torch.Tensor]:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.get_rng_state_all()
    return []


def _use_deterministic_algorithms(mode: bool, warn_only: bool) -> None:
    """torch.use_deterministic_algorithms without importing torch._inductor (2 s on a
    small CPU) when the project does not use it."""
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # a torch without the private setter: pay for the import
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
        return
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        inductor.deterministic = mode
    setter(mode, warn_only=warn_only)


def _cuda_devices() -> list[int]:
    # fork_rng warns when asked to fork every device of a machine with many; one is
    # enough for the gate, and none when CUDA is not initialised.
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return [torch.cuda.current_device()]
    return []
