"""``out-of-memory``: the tensors do not fit. Reports the batch size and the memory
figures, and the field guide's ways out."""

from __future__ import annotations

import re

from mlsmoke.overfit.training.evidence import OUT_OF_MEMORY
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "out-of-memory"

_MESSAGES = ("out of memory", "can't allocate memory", "cannot allocate memory")

# Phases outside the forward pass, where no module or loss is to blame.
_OUTSIDE_FORWARD = {
    "model": "building the model",
    "batch": "building the batch",
    "optimizer": "building the optimizer",
    "backward": "the backward pass",
    "step": "the optimizer step",
    "scheduler": "the lr scheduler step",
}

SUGGESTIONS = [
    "use a smaller batch for the gate (memorizing a handful of examples is enough)",
    "train in lower precision (bfloat16 or float16)",
    "use gradient accumulation or gradient checkpointing",
    "look for a tensor sized by a constant instead of the batch or sequence length",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if evidence.error is None:
        return None
    if not (
        evidence.cuda_error == OUT_OF_MEMORY
        or isinstance(evidence.error, MemoryError)
        or (_errors.is_torch_error(evidence) and _errors.mentions(evidence, _MESSAGES))
    ):
        return None
    outside = _OUTSIDE_FORWARD.get(evidence.phase or "")
    lines = [f"{outside or _errors.where(evidence)} raised {_errors.raised(evidence)}"]
    asked = _requested_bytes(_errors.message(evidence))
    if asked is not None:
        lines.append(f"one allocation asked for {_gib(asked)}")
    if evidence.batch_size is not None:
        lines.append(f"batch size: {evidence.batch_size}")
    lines += _memory_lines(evidence.memory, evidence.device)
    shapes = _errors.input_shapes(evidence, evidence.failed_module)
    if shapes is not None:
        lines.append(f"inputs of {_errors.where(evidence)}: {shapes}")
    device = evidence.device
    summary = f"out of memory on {device} during the {evidence.phase or 'run'}"
    if outside:
        summary = f"out of memory on {device} while {outside}"
    if evidence.batch_size is not None:
        summary += f" (batch size {evidence.batch_size})"
    return Diagnosis(CODE, summary, lines, SUGGESTIONS)


def _requested_bytes(text: str) -> int | None:
    found = re.search(r"allocate (\d+) bytes", text)
    if found:
        return int(found.group(1))
    found = re.search(r"Tried to allocate ([\d.]+) (GiB|MiB|KiB)", text)
    if found:
        unit = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10}[found.group(2)]
        return int(float(found.group(1)) * unit)
    return None


def _memory_lines(figures: dict[str, int], device: str) -> list[str]:
    if not figures:
        return []
    parts = [
        f"{_gib(figures[key])} {key}"
        for key in ("allocated", "reserved", "peak", "free")
        if key in figures
    ]
    total = f" of {_gib(figures['total'])}" if "total" in figures else ""
    return [f"memory on {device}: {', '.join(parts)}{total}"]


def _gib(count: int) -> str:
    return f"{count / 2**30:.2f} GiB"
