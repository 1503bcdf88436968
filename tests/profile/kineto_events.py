"""Chrome trace events as torch.profiler (kineto) writes them on a CUDA machine:
the host's ranges, ops and runtime calls, and the device's kernels and copies, joined
by ``correlation``. The CUDA rules are tested on these, as no GPU is here."""

from __future__ import annotations

from typing import Any

from mlsmoke.profile.phases import PHASES, range_name

HOST, DEVICE_STREAM = 100, 7


class CudaTrace:
    """Steps laid out one after another; each phase holds what is added to it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.correlation = 0

    def _x(self, cat: str, name: str, ts: float, dur: float, tid: Any, **args: Any):
        self.events.append(
            {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid,
             "ts": ts, "dur": dur, "args": args}
        )  # fmt: skip

    def step(
        self,
        index: int,
        start: float,
        phase_us: dict[str, float],
        launches: dict[str, list[tuple[str, float]]] | None = None,
        gpu_lag: float = 5.0,
        ops: dict[str, list[tuple[str, list[str]]]] | None = None,
    ) -> float:
        """One step from ``start`` (µs): each phase lasts ``phase_us``; in it,
        ``launches[phase]`` are (kernel name, kernel µs), launched one after another,
        each under the op ``ops[phase][i]`` (name, input types) when given; the
        kernels run ``gpu_lag`` µs after their launch. Returns the step's end."""
        launches, ops = launches or {}, ops or {}
        time = start
        for phase in PHASES:
            length = phase_us.get(phase, 0.0)
            self._x("user_annotation", range_name(phase), time, length, HOST)
            calls = launches.get(phase, [])
            for i, (kernel, kernel_us) in enumerate(calls):
                at = time + (i + 0.5) * length / (len(calls) + 1)
                self.launch(
                    at,
                    kernel,
                    kernel_us,
                    gpu_lag,
                    (ops.get(phase) or [None] * len(calls))[i],
                )
            time += length
        self._x("user_annotation", f"ProfilerStep#{index}", start, time - start, HOST)
        self._device_ranges(index, start, time)
        return time

    def _device_ranges(self, index: int, start: float, end: float) -> None:
        """kineto's copies of the user ranges on the device's timeline."""
        lag = 3.0
        self._x("gpu_user_annotation", f"ProfilerStep#{index}", start + lag,
                end - start, DEVICE_STREAM)  # fmt: skip
        for event in [e for e in self.events if e["cat"] == "user_annotation"]:
            if start <= event["ts"] < end and event["name"].startswith("mlsmoke/"):
                self._x("gpu_user_annotation", event["name"], event["ts"] + lag,
                        event["dur"], DEVICE_STREAM)  # fmt: skip

    def launch(
        self,
        at: float,
        kernel: str,
        kernel_us: float,
        lag: float,
        op: tuple[str, list[str]] | None = None,
    ) -> None:
        self.correlation += 1
        if op is not None:
            self._x("cpu_op", op[0], at - 1, 4, HOST, **{"Input type": op[1]})
        cat, name = (
            ("gpu_memcpy", kernel)
            if kernel.startswith("Memcpy")
            else ("kernel", kernel)
        )
        call = "cudaMemcpyAsync" if cat == "gpu_memcpy" else "cudaLaunchKernel"
        self._x("cuda_runtime", call, at, 2, HOST, correlation=self.correlation)
        self._x(cat, name, at + lag, kernel_us, DEVICE_STREAM,
                correlation=self.correlation, stream=DEVICE_STREAM)  # fmt: skip

    def sync(self, at: float, name: str = "cudaStreamSynchronize") -> None:
        self._x("cuda_runtime", name, at, 10, HOST, correlation=0)
