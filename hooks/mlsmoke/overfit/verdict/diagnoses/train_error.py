"""``train-error``: a step of the run raised; show where, with the user's traceback.

The fallback for errors no specific diagnosis claims. CUDA out-of-memory gets its memory
figures and the batch size; a CUDA error re-run on the CPU says so.
"""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import OUT_OF_MEMORY, Evidence, ProjectProblem
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import TRAIN_ERROR, Diagnosis

_DOING = {
    "model": "building the model",
    "batch": "building the batch",
    "optimizer": "building the optimizer",
    "forward": "the forward pass",
    "loss": "computing the loss",
    "backward": "the backward pass",
    "step": "the optimizer step",
    "scheduler": "the lr scheduler step",
}


BUILDING_THE_MODEL = (
    "the model factory raised before any training: its message and the traceback's"
    " last project line say what to change (a library's configuration, such as"
    " LoRA target_modules naming layers the model does not have)"
)


@diagnoser(TRAIN_ERROR)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if evidence.error is None:
        return None
    where = _DOING.get(evidence.phase or "", "training")
    if evidence.failed_module:
        where += f" (in module {evidence.failed_module})"
    message = str(evidence.error).strip().splitlines()[0] if str(evidence.error) else ""
    name = type(evidence.error).__name__
    summary = (
        f"{where} raised {name}: {message}" if message else f"{where} raised {name}"
    )
    if isinstance(evidence.error, ProjectProblem):  # mlsmoke's finding, not a raise
        summary = f"{where}: {message}"
    lines = _rerun_lines(evidence) + _memory_lines(evidence)
    if evidence.user_traceback:
        lines.append(evidence.user_traceback)
    suggestions = []
    if evidence.phase == "model":
        suggestions = [BUILDING_THE_MODEL]
    if evidence.cuda_error == OUT_OF_MEMORY:
        suggestions = [
            "use a smaller batch for the gate",
            "train in lower precision (bfloat16 or float16)",
            "use gradient checkpointing or gradient accumulation",
        ]
    return Diagnosis(TRAIN_ERROR, summary, lines, suggestions)


def _rerun_lines(evidence: Evidence) -> list[str]:
    cuda = evidence.rerun_of
    if cuda is None:
        return []
    first = str(cuda.error).strip().splitlines()[0] if cuda.error else cuda.cuda_error
    return [
        f"on {cuda.device}, {cuda.phase or 'training'} raised: {first}",
        "CUDA reports errors asynchronously, at the wrong line, so the gate re-ran on"
        " the CPU; the traceback below is the CPU's",
    ]


def _memory_lines(evidence: Evidence) -> list[str]:
    if evidence.cuda_error != OUT_OF_MEMORY:
        return []
    lines = []
    if evidence.batch_size is not None:
        lines.append(f"batch size: {evidence.batch_size}")
    figures = evidence.memory
    if figures:
        parts = [
            f"{gib(figures[key])} {key}"
            for key in ("allocated", "reserved", "peak", "free")
            if key in figures
        ]
        total = f" of {gib(figures['total'])}" if "total" in figures else ""
        lines.append(f"CUDA memory on {evidence.device}: {', '.join(parts)}{total}")
    return lines


def gib(count: int) -> str:
    return f"{count / 2**30:.2f} GiB"
