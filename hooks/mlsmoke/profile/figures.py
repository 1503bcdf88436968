"""What one profile measured, as plain values: the worker writes them as JSON, the
command reads them back, the rules decide from them. No torch here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# The properties to_json adds, which from_json leaves out.
DERIVED = ("samples_per_second", "tokens_per_second", "profiler_overhead_seconds",
           "profiler_overhead_share", "shares")  # fmt: skip


@dataclass
class Loader:
    """Where the batches came from, as configured."""

    kind: str  # "DataLoader", "MyDataModule.train_dataloader()", "batch callable"
    where: str  # the config key and spec, e.g. tool.mlsmoke.overfit.batch (m:f)
    num_workers: int | None = None
    pin_memory: bool | None = None
    batch_size: int | None = None
    cpu_count: int = 1


@dataclass
class Optimizer:
    name: str
    source: str  # the recipe's origin, e.g. "mypkg.train:optimizer"
    parameter_tensors: int = 0
    foreach: bool | None = None  # the param group's setting (None: torch decides)
    fused: bool | None = None
    supports_foreach: bool = False
    supports_fused: bool = False
    zero_grad_where: str = ""  # the zero_grad the step called, file:line when known


@dataclass
class SyncPoint:
    """A CPU-GPU synchronization inside the step, at the project's source line."""

    where: str  # file:line
    code: str  # the source line
    per_step: float


@dataclass
class Gpu:
    """CUDA only: what the device did during the profiled steps."""

    name: str
    capability: list[int]  # [major, minor]
    tf32: bool  # float32 matmuls may use TF32 tensor cores
    utilization: float = 0.0  # share of the step with a kernel running
    idle_gaps: int = 0  # gaps of at least IDLE_GAP_US between kernels, per step
    idle_seconds: float = 0.0  # their total, per step
    longest_gap_seconds: float = 0.0
    kernels_per_step: float = 0.0
    median_kernel_us: float = 0.0
    optimizer_kernels_per_step: float = 0.0
    h2d_copies_per_step: float = 0.0
    pageable_h2d_seconds: float = 0.0  # per step, copies from unpinned memory
    fp32_matmul_seconds: float = 0.0  # per step, kernel time of float32 matmuls
    reduced_precision_matmuls: int = 0  # half/bfloat16 matmul ops: autocast or .half()
    sync_events_per_step: float = 0.0  # synchronizing runtime calls in the trace
    syncs: list[SyncPoint] = field(default_factory=list)


@dataclass
class Model:
    """The model the step trains: in script mode, the one ``find_model`` found."""

    name: str  # its class
    parameters: int  # elements, tied weights counted once
    where: str = ""  # script mode: where its class is defined, e.g. model.py:80


@dataclass
class Threads:
    """On the CPU: the unprofiled step at the process's thread count and at another
    (1 when that is more, else the CPUs the process may use)."""

    default: int
    default_step_seconds: float
    other: int | None = None  # None: there was no other count to try
    other_step_seconds: float | None = None

    @property
    def other_is_faster_by(self) -> float | None:
        """default step / other step: above 1, the other count is faster."""
        if not self.other_step_seconds or self.other is None:
            return None
        return self.default_step_seconds / self.other_step_seconds


@dataclass
class Figures:
    gate: str
    device: str  # cpu, cuda:0
    device_name: str  # the machine's CPU model or the GPU's name: --check's key
    steps: int
    warmup: int
    batch_size: int | None
    steps_per_second: float  # unprofiled steps
    profiled_steps_per_second: float
    step_seconds: float  # mean profiled step
    split: dict[str, float]  # phase -> seconds per profiled step, "other" included
    loader: Loader
    optimizer: Optimizer
    zero_grad_fills: float = 0.0  # tensors zero-filled by zero_grad, per step
    top_ops: list[dict[str, Any]] = field(default_factory=list)
    peak_memory_bytes: int = 0
    peak_memory_of: str = ""  # what the peak is of
    gpu: Gpu | None = None
    model: Model | None = None
    forwards_per_step: int = 1  # script mode: micro-batches an optimizer update takes
    tokens_per_step: int | None = None  # integer input elements a step, when integers
    threads: Threads | None = None
    script: str | None = None  # script mode: the command profiled
    data_from: str = ""  # script mode: what the data phase is the time of

    @property
    def samples_per_second(self) -> float | None:
        if self.batch_size is None:
            return None
        return self.steps_per_second * self.batch_size * self.forwards_per_step

    @property
    def tokens_per_second(self) -> float | None:
        if self.tokens_per_step is None:
            return None
        return self.steps_per_second * self.tokens_per_step

    @property
    def profiler_overhead_seconds(self) -> float:
        """What the profiler adds to a step: the profiled step less the unprofiled."""
        if self.steps_per_second <= 0:
            return 0.0
        return max(self.step_seconds - 1 / self.steps_per_second, 0.0)

    @property
    def profiler_overhead_share(self) -> float:
        """The profiler's share of a profiled step, 0..1."""
        if self.step_seconds <= 0:
            return 0.0
        return self.profiler_overhead_seconds / self.step_seconds

    def share(self, phase: str) -> float:
        """``phase``'s share of a profiled step, 0..1."""
        if self.step_seconds <= 0:
            return 0.0
        return self.split.get(phase, 0.0) / self.step_seconds

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["samples_per_second"] = self.samples_per_second
        data["tokens_per_second"] = self.tokens_per_second
        data["profiler_overhead_seconds"] = self.profiler_overhead_seconds
        data["profiler_overhead_share"] = self.profiler_overhead_share
        data["shares"] = {phase: self.share(phase) for phase in self.split}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figures:
        """KeyError/TypeError when malformed."""
        fields = {k: v for k, v in data.items() if k not in DERIVED}
        fields["loader"] = Loader(**fields["loader"])
        fields["optimizer"] = Optimizer(**fields["optimizer"])
        for name, kind in (("model", Model), ("threads", Threads)):
            if fields.get(name) is not None:
                fields[name] = kind(**fields[name])
        gpu = fields.get("gpu")
        if gpu is not None:
            gpu = dict(gpu, syncs=[SyncPoint(**s) for s in gpu.get("syncs", [])])
            fields["gpu"] = Gpu(**gpu)
        return cls(**fields)
