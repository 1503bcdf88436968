"""The gates run in the project's interpreter, one worker after another: a gate
killed at its timeout fails, and a new worker runs the gates after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlsmoke.overfit.process.deaths import ended_early, timed_out
from mlsmoke.overfit.process.json_job import run_json_job
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.result import Result
from mlsmoke.project_process import WorkerUse, warm_then_cold


def run_worker(
    root: Path,
    python: Path,
    gates: list[GateSettings],
    device: str | None,
    verbose: bool,
) -> tuple[list[Result], dict[str, Any]]:
    """The gates' Results, and the torch stamp of ``python`` (empty if it died)."""
    results: list[Result] = []
    torch: dict[str, Any] = {}
    pending = list(gates)
    while pending:
        ran, stamp, end = warm_then_cold(
            lambda warm: _run_once(root, python, pending, device, verbose, warm)
        )
        results += ran
        torch = torch or stamp
        done = {result.gate for result in ran}
        missing = [gate for gate in pending if gate.name not in done]
        stuck = [gate for gate in missing if gate.name == end.gate]
        if not missing or end.timed_out_after is None or not stuck:
            return results + ended_early(missing, python, end), torch
        results.append(timed_out(stuck[0], end))
        pending = [gate for gate in missing if gate is not stuck[0]]
    return results, torch


def _run_once(root, python, gates, device, verbose, warm: WorkerUse):
    request = {
        "root": str(root),
        "gates": [gate.to_json() for gate in gates],
        "device": device,
    }
    answer, end = run_json_job(
        "overfit", root, python, request, warm=warm, gates=gates, verbose=verbose
    )
    try:
        results = [Result.from_json(item) for item in answer["results"]]
        return results, answer["torch"] if results else {}, end
    except (KeyError, TypeError):
        return [], {}, end
