"""The verdict on gates whose worker ended before reporting them: killed at their
timeout, killed by a signal (the OOM killer's SIGKILL, most often), or exited."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

from mlsmoke.overfit.process import stacks
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.result import TRAIN_ERROR, Diagnosis, Result
from mlsmoke.process_end import crash_advice, crash_signal, how_it_ended
from mlsmoke.signals import signal_name

TIMEOUT = "timeout"
KILLED = "killed"
OUTPUT_TAIL = 40  # lines of the worker's output shown when it dies
_CRASH_FRAMES = 5  # the gate's innermost frames, shown when none is the project's
WORKER_ENTRY = "overfit/process/worker.py"

_FACTORY_HANGS = [
    "a factory must return on its own: look for a lock, an input() or a network call"
    " in the stack above",
    "load data and weights from local files in the gate's factories",
]
_TOO_SLOW = [
    "use a smaller model or batch for the gate: it only needs to memorize a handful"
    " of examples",
    "or raise {key}",
]
_SCRIPT_TOO_SLOW = [
    "make the script's run small for the gate (a smaller model and batch, few"
    " evaluation iterations: it only needs to memorize a handful of examples),"
    " through {args} where the script reads its settings from its arguments",
    "or raise {key}",
]


@dataclass
class WorkerEnd:
    """How the worker ended: exit code (negative: killed by that signal), its peak
    memory, the gate it had started last, and the allowance of a watchdog kill."""

    code: int
    peak_bytes: int
    gate: str | None
    timed_out_after: float | None
    output: str = ""
    stack: str = ""
    forked: bool = False  # by the warm worker, not a process of its own


def ended_early(
    gates: list[GateSettings], python: Path, end: WorkerEnd
) -> list[Result]:
    """Results for ``gates``, which the worker never reported."""
    results = []
    running = end.gate or (gates[0].name if gates else None)
    for gate in gates:
        if gate.name == running and end.timed_out_after is not None:
            results.append(timed_out(gate, end))
        elif gate.name == end.gate or end.gate is None:
            results.append(_died(gate, python, end))
        else:
            summary = f"not run: the worker stopped during gate {end.gate!r}"
            results.append(Result(gate.name, Diagnosis(TRAIN_ERROR, summary)))
    return results


def timed_out(gate: GateSettings, end: WorkerEnd) -> Result:
    if end.gate is None:
        summary = (
            f"the worker had not started the gate after {end.timed_out_after:g} s"
            " (importing torch and mlsmoke)"
        )
        return Result(gate.name, Diagnosis(TIMEOUT, summary, _tail(end.output)))
    frames = stacks.main_thread_frames(end.stack, WORKER_ENTRY)
    phase = stacks.phase_of(frames) if frames else None
    summary = f"no verdict within the timeout ({gate.timeout:g} s): "
    if phase in (stacks.MODEL, stacks.BATCH, stacks.IMPORT):
        factory = {stacks.MODEL: gate.model, stacks.BATCH: gate.batch}.get(phase)
        summary += f"{stacks.DOING[phase]} never finished"
        summary += f" ({factory} had not returned)" if factory else ""
        suggestions = list(_FACTORY_HANGS)
    elif phase == stacks.SCRIPT:
        summary += (
            f"the training script ({gate.script}) was still running: its own work"
            " between the gate's updates (an evaluation loop, data loading) counts"
            " toward the timeout too"
        )
        suggestions = [
            line.format(key=gate.key_path("timeout"), args=gate.key_path("args"))
            for line in _SCRIPT_TOO_SLOW
        ]
    else:
        doing = stacks.DOING[phase] if phase else "the gate"
        summary += f"{doing} was still running: one step is slower than the timeout"
        key = gate.key_path("timeout")
        suggestions = [line.format(key=key) for line in _TOO_SLOW]
    evidence = [
        f"the worker was killed {end.timed_out_after:g} s after the gate started"
    ]
    own = stacks.user_frames(frames)
    if own:
        evidence.append(
            "where your code was (most recent call last):\n" + "\n".join(map(str, own))
        )
    elif not frames:
        evidence.append("no stack was written: the worker was stuck outside Python")
    return Result(gate.name, Diagnosis(TIMEOUT, summary, evidence, suggestions))


def _died(gate: GateSettings, python: Path, end: WorkerEnd) -> Result:
    evidence = _tail(end.output)
    if crash_signal(end.code):
        return _crashed(gate, python, end)
    if end.code < 0:
        name = signal_name(-end.code)
        summary = f"{python} was killed by {name} before the gate finished"
        if -end.code == signal.SIGKILL:
            evidence.insert(0, _oom_line(end.peak_bytes))
        return Result(gate.name, Diagnosis(KILLED, summary, evidence))
    summary = f"{python} exited with code {end.code} before the gate finished"
    return Result(gate.name, Diagnosis(TRAIN_ERROR, summary, evidence))


def _crashed(gate: GateSettings, python: Path, end: WorkerEnd) -> Result:
    """A crash: where it happened, read from the job's faulthandler dump."""
    frames = stacks.main_thread_frames(end.stack, WORKER_ENTRY)
    doing = stacks.DOING[stacks.phase_of(frames)] if frames else "running the gate"
    summary = f"{python} {how_it_ended(end.code)} while {doing}"
    evidence = []
    own = stacks.user_frames(frames)
    shown = own or frames[-_CRASH_FRAMES:]
    if shown:
        where = "your code" if own else "the gate"
        evidence.append(
            f"where {where} was (most recent call last):\n" + "\n".join(map(str, shown))
        )
    evidence += _tail(end.output)
    command = f"mlsmoke overfit --gate {gate.name}"
    suggestions = crash_advice(command, end.forked, stack_shown=bool(shown))
    return Result(gate.name, Diagnosis(KILLED, summary, evidence, suggestions))


def _oom_line(peak: int) -> str:
    line = "the kernel's out-of-memory killer is the usual sender of SIGKILL"
    if peak:
        line += f"; the worker's memory peaked at {peak / 2**20:,.0f} MiB"
    return line


def _tail(output: str) -> list[str]:
    tail = "\n".join(output.rstrip().splitlines()[-OUTPUT_TAIL:])
    return [tail] if tail else []
