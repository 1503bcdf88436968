"""Each recommendation rule fires past its threshold, names the figure and the
setting, and stays silent short of it. The CUDA rules read device figures measured
from kineto-format events (``kineto_events.py``)."""

from __future__ import annotations

import dataclasses

import pytest
from kineto_events import CudaTrace

from mlsmoke.profile.figures import Figures, Gpu, Loader, Optimizer, SyncPoint
from mlsmoke.profile.phases import BACKWARD, DATA_WAIT, FORWARD, H2D_COPY, OPTIMIZER
from mlsmoke.profile.rules import (
    data_workers,
    optimizer_kernels,
    pin_memory,
    recommend,
    small_batch,
    sync_in_step,
    tf32_matmul,
    zero_grad,
)
from mlsmoke.profile.trace import measure

LOADER = "mypkg.data:loader (src/mypkg/data.py:12)"
PHASE_US = {DATA_WAIT: 20, H2D_COPY: 30, FORWARD: 400, BACKWARD: 450, OPTIMIZER: 100}


def figures(split_us: dict[str, float] | None = None, **changes) -> Figures:
    split = {k: v / 1e6 for k, v in (split_us or PHASE_US).items()}
    split["other"] = 0.0
    base = Figures(
        gate="default", device="cpu", device_name="cpu: test", steps=10, warmup=3,
        batch_size=32, steps_per_second=900.0, profiled_steps_per_second=900.0,
        step_seconds=sum(split.values()), split=split,
        loader=Loader("DataLoader", LOADER, num_workers=4, pin_memory=True,
                      batch_size=32, cpu_count=8),
        optimizer=Optimizer("AdamW", "mypkg.train:optimizer", parameter_tensors=40,
                            foreach=None, supports_foreach=True, supports_fused=True),
    )  # fmt: skip
    return dataclasses.replace(base, **changes)


def on_gpu(trace: CudaTrace, **gpu_changes) -> Gpu:
    measured = measure(trace.events)
    gpu = Gpu(name="NVIDIA A100", capability=[8, 0], tf32=False, **measured.gpu)
    return dataclasses.replace(gpu, **gpu_changes)


def busy_trace(launches: dict | None = None, ops: dict | None = None) -> CudaTrace:
    """Kernels that keep the device busy through forward and backward."""
    trace = CudaTrace()
    launches = launches or {FORWARD: [("gemm", 390.0)], BACKWARD: [("gemm", 440.0)]}
    end = 0.0
    for index in range(3):
        end = trace.step(index, end, PHASE_US, launches, ops=ops)
    return trace


# data-workers


def test_data_wait_with_no_workers_fires_and_names_the_loader() -> None:
    slow = figures({**PHASE_US, DATA_WAIT: 4000}, loader=Loader(
        "DataLoader", LOADER, num_workers=0, batch_size=32, cpu_count=8))  # fmt: skip
    (found,) = [r for r in recommend(slow) if r.rule == data_workers.NAME]
    assert "4.0 ms" in found.measured and "80%" in found.measured
    assert "num_workers=0" in found.measured
    assert "num_workers=" in found.change and LOADER in found.change


# 40 µs: 4% of the step; 4 ms with a worker per CPU; 800 µs: 44%, but under 1 ms
@pytest.mark.parametrize("data_us, workers", [(40, 0), (4000, 8), (800, 0)])
def test_data_wait_is_silent_short_of_its_thresholds_or_with_a_worker_per_cpu(
    data_us: float, workers: int
) -> None:
    loader = Loader("DataLoader", LOADER, num_workers=workers, cpu_count=8)
    slow = figures({**PHASE_US, DATA_WAIT: data_us}, loader=loader)
    assert data_workers.check(slow) is None


def test_a_batch_callable_that_is_slow_is_told_to_become_a_loader() -> None:
    loader = Loader("batch callable", "mypkg.data:batch", cpu_count=2)
    found = data_workers.check(figures({**PHASE_US, DATA_WAIT: 5000}, loader=loader))
    assert found is not None and "return a torch.utils.data.DataLoader" in found.change


# pin-memory


def test_pageable_copies_with_pin_memory_off_fire() -> None:
    copies = {H2D_COPY: [("Memcpy HtoD (Pageable -> Device)", 28.0)]}
    trace = busy_trace({**copies, FORWARD: [("gemm", 390.0)]})
    loader = Loader("DataLoader", LOADER, num_workers=4, pin_memory=False, cpu_count=8)
    found = pin_memory.check(figures(loader=loader, gpu=on_gpu(trace)))
    assert found is not None and "pin_memory=True" in found.change
    assert "0.03 ms" in found.measured and "3%" in found.measured


def test_pinned_loaders_and_small_copies_are_silent() -> None:
    copies = {H2D_COPY: [("Memcpy HtoD (Pageable -> Device)", 5.0)]}
    off = Loader("DataLoader", LOADER, num_workers=4, pin_memory=False, cpu_count=8)
    assert pin_memory.check(figures(loader=off, gpu=on_gpu(busy_trace(copies)))) is None
    big = {H2D_COPY: [("Memcpy HtoD (Pageable -> Device)", 28.0)]}
    assert pin_memory.check(figures(gpu=on_gpu(busy_trace(big)))) is None  # pinned
    assert pin_memory.check(figures(loader=off)) is None  # on the CPU


# sync-in-step


def test_a_sync_at_a_project_line_every_step_fires_with_the_line() -> None:
    sync = SyncPoint("src/mypkg/train.py:41", "acc += (pred == y).sum().item()", 1.0)
    found = sync_in_step.check(figures(gpu=on_gpu(busy_trace(), syncs=[sync])))
    assert found is not None
    assert "src/mypkg/train.py:41" in found.measured and ".item()" in found.measured


def test_no_sync_or_a_sync_now_and_then_is_silent() -> None:
    assert sync_in_step.check(figures(gpu=on_gpu(busy_trace()))) is None
    rare = SyncPoint("src/mypkg/train.py:50", "print(loss)", 0.1)
    assert sync_in_step.check(figures(gpu=on_gpu(busy_trace(), syncs=[rare]))) is None


# optimizer-kernels


def per_tensor_optimizer(kernels_per_tensor: int, tensors: int = 40) -> Gpu:
    launches = {
        OPTIMIZER: [("elementwise_kernel", 3.0)] * (kernels_per_tensor * tensors)
    }
    launches[FORWARD] = [("gemm", 390.0)]
    return on_gpu(busy_trace(launches))


def test_a_single_tensor_optimizer_with_foreach_available_fires() -> None:
    found = optimizer_kernels.check(figures(gpu=per_tensor_optimizer(4)))
    assert found is not None
    assert "160 kernels for 40 parameter tensors" in found.measured
    assert "AdamW(..., fused=True) in mypkg.train:optimizer" == found.change


def test_foreach_on_few_kernels_or_no_foreach_is_silent() -> None:
    gpu = per_tensor_optimizer(4)
    foreach = dataclasses.replace(figures().optimizer, foreach=True)
    lean = dataclasses.replace(figures().optimizer, supports_foreach=False,
                               supports_fused=False)  # fmt: skip
    assert optimizer_kernels.check(figures(gpu=gpu, optimizer=foreach)) is None
    assert optimizer_kernels.check(figures(gpu=gpu, optimizer=lean)) is None
    assert optimizer_kernels.check(figures(gpu=per_tensor_optimizer(1))) is None


# tf32-matmul

FP32 = {FORWARD: [("aten::mm", ["float", "float"])],
        BACKWARD: [("aten::mm", ["float", "float"])]}  # fmt: skip


def test_float32_matmuls_on_an_ampere_gpu_with_tf32_off_fire() -> None:
    found = tf32_matmul.check(figures(gpu=on_gpu(busy_trace(ops=FP32))))
    assert found is not None and 'set_float32_matmul_precision("high")' in found.change
    assert "sm_80" in found.measured


def test_tf32_on_autocast_or_an_older_gpu_is_silent() -> None:
    assert (
        tf32_matmul.check(figures(gpu=on_gpu(busy_trace(ops=FP32), tf32=True))) is None
    )
    assert (
        tf32_matmul.check(figures(gpu=on_gpu(busy_trace(ops=FP32), capability=[7, 5])))
        is None
    )
    half = {FORWARD: [("aten::mm", ["c10::BFloat16", "c10::BFloat16"])],
            BACKWARD: [("aten::mm", ["float", "float"])]}  # fmt: skip
    assert tf32_matmul.check(figures(gpu=on_gpu(busy_trace(ops=half)))) is None


# small-batch


def test_an_idle_gpu_with_short_kernels_fires_and_names_the_batch_size() -> None:
    short = {FORWARD: [("gemm", 6.0)] * 10, BACKWARD: [("gemm", 6.0)] * 20}
    found = small_batch.check(figures(gpu=on_gpu(busy_trace(short))))
    assert found is not None and "batch_size=32" in found.change
    assert "median kernel of 6.0 µs" in found.measured


def test_a_busy_gpu_or_long_kernels_are_silent() -> None:
    assert small_batch.check(figures(gpu=on_gpu(busy_trace()))) is None
    long = {FORWARD: [("gemm", 100.0)]}
    assert small_batch.check(figures(gpu=on_gpu(busy_trace(long)))) is None


# zero-grad


def test_zero_filled_gradients_fire_at_the_projects_zero_grad() -> None:
    where = "src/mypkg/optim.py:30"
    optimizer = dataclasses.replace(figures().optimizer, zero_grad_where=where)
    found = zero_grad.check(figures(zero_grad_fills=12, optimizer=optimizer))
    assert found is not None and "set_to_none=True" in found.change
    assert "src/mypkg/optim.py:30" in found.change and "12" in found.measured


def test_a_clean_step_fires_nothing() -> None:
    assert recommend(figures()) == []
    assert recommend(figures(gpu=on_gpu(busy_trace()))) == []
