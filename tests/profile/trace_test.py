"""The figures ``trace.measure`` reads from trace events: the CPU split from a real
profile, and the device's figures from events laid out as kineto writes them."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from kineto_events import CudaTrace

from mlsmoke.profile.phases import BACKWARD, DATA_WAIT, FORWARD, H2D_COPY, OPTIMIZER
from mlsmoke.profile.trace import load_events, measure

PHASE_US = {DATA_WAIT: 100, H2D_COPY: 50, FORWARD: 300, BACKWARD: 400, OPTIMIZER: 150}


def test_the_split_is_the_phase_ranges_per_step_and_the_rest_is_other() -> None:
    trace = CudaTrace()
    end = 0.0
    for index in range(4):
        end = trace.step(index, end + 20, PHASE_US)  # 20 µs outside each step
    measured = measure(trace.events)
    assert measured.steps == 4
    assert measured.step_seconds == pytest.approx(1000e-6)
    assert measured.split[FORWARD] == pytest.approx(300e-6)
    assert measured.split["other"] == pytest.approx(0.0, abs=1e-9)
    assert measured.gpu == {}  # no kernel: not a CUDA trace


def test_utilization_is_the_share_of_the_step_with_a_kernel_running() -> None:
    trace = CudaTrace()
    launches = {FORWARD: [("sgemm", 200.0)], BACKWARD: [("sgemm", 300.0)]}
    end = 0.0
    for index in range(2):
        end = trace.step(index, end, PHASE_US, launches)
    gpu = measure(trace.events).gpu
    assert gpu["utilization"] == pytest.approx(0.5, abs=0.02)
    assert gpu["kernels_per_step"] == 2
    assert gpu["idle_gaps"] >= 2  # the data wait, the copy and the optimizer: idle


def test_kernels_are_counted_in_the_phase_that_launched_them() -> None:
    trace = CudaTrace()
    launches = {OPTIMIZER: [("adam_kernel", 2.0)] * 30, FORWARD: [("gemm", 50.0)]}
    trace.step(0, 0.0, PHASE_US, launches)
    gpu = measure(trace.events).gpu
    assert gpu["optimizer_kernels_per_step"] == 30
    assert gpu["median_kernel_us"] == 2.0


def test_pageable_copies_and_synchronizations_are_measured() -> None:
    trace = CudaTrace()
    launches = {H2D_COPY: [("Memcpy HtoD (Pageable -> Device)", 40.0)]}
    end = trace.step(0, 0.0, PHASE_US, launches)
    trace.sync(PHASE_US[DATA_WAIT] + PHASE_US[H2D_COPY] + 100)  # in the forward
    trace.sync(end + 50)  # outside the step: not counted
    gpu = measure(trace.events).gpu
    assert gpu["h2d_copies_per_step"] == 1
    assert gpu["pageable_h2d_seconds"] == pytest.approx(40e-6)
    assert gpu["sync_events_per_step"] == 1


def test_float32_matmul_time_comes_from_the_op_that_launched_the_kernel() -> None:
    trace = CudaTrace()
    launches = {FORWARD: [("sgemm", 100.0), ("hgemm", 30.0)]}
    ops = {FORWARD: [("aten::mm", ["float", "float"]),
                     ("aten::mm", ["c10::Half", "c10::Half"])]}  # fmt: skip
    trace.step(0, 0.0, PHASE_US, launches, ops=ops)
    gpu = measure(trace.events).gpu
    assert gpu["fp32_matmul_seconds"] == pytest.approx(100e-6)
    assert gpu["reduced_precision_matmuls"] == 1


def test_a_real_cpu_profile_has_every_phase_and_zero_fills_under_zero_grad() -> None:
    torch = pytest.importorskip("torch")
    from torch.profiler import profile, record_function, schedule

    from mlsmoke.profile.phases import PHASES, ZERO_GRAD, range_name

    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    events = []

    def ready(profiler) -> None:
        events.extend(_events(profiler))

    steps = schedule(wait=0, warmup=1, active=3)
    with profile(schedule=steps, on_trace_ready=ready) as p:
        for _ in range(4):
            for phase in PHASES[:-1]:
                with record_function(range_name(phase)):
                    if phase == FORWARD:
                        loss = model(torch.randn(3, 4)).sum()
                    elif phase == BACKWARD:
                        loss.backward()
            with record_function(range_name(OPTIMIZER)):
                optimizer.step()
                with record_function(range_name(ZERO_GRAD)):
                    optimizer.zero_grad(set_to_none=False)
            p.step()
    measured = measure(events)
    assert measured.steps == 3
    assert all(measured.split[phase] > 0 for phase in PHASES)
    assert measured.zero_grad_fills == 2  # weight and bias, each step


def _events(profiler) -> list[dict]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "trace.json.gz")
        profiler.export_chrome_trace(str(path))
        return load_events(path)
