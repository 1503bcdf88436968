"""Faults injected into the real CLI: hangs at each phase, signals to the hook and its
worker, a closed stdout, an unwritable --json. Each runs ``mlsmoke`` in a subprocess
(``tests/faults/faultkit.py``) and is judged on its exit code and message; the figures
are the time to exit after the hang started or the signal was sent, and what was left
behind (processes, temporary files), which must be 0.
"""

from __future__ import annotations

import signal
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.report import Section
from tests.faults.faultkit import Fault, Outcome, run_cli, write_project

TIMEOUT = 2.0  # the gates' and the doctest files' timeout in the hang faults


@dataclass
class Scenario:
    name: str
    kind: str  # hang, signal, crash or input
    args: list[str]
    code: int
    says: str
    keys: dict = field(default_factory=dict)
    fault: Fault | None = None
    options: dict = field(default_factory=dict)
    quick: bool = False
    after: Callable[[Path, Path], Outcome] | None = None  # a follow-up run


HUNG = {"model": "fault_factories:hung_model", "timeout": 60}
DOCTEST_HANG = '"""\n>>> import threading; threading.Event().wait()\n"""\n'
DOCTEST_FLOOD = '"""\n>>> while True: print("x" * 1000)\n"""\n'
DOCTEST_OK = '"""\n>>> 1 + 1\n2\n"""\n'
OVERFIT = ["overfit", "--no-cache"]


def _next_run_sweeps(root: Path, scratch: Path) -> Outcome:
    """A later run, which removes what a SIGKILLed one could not."""
    return run_cli(["doctest", "ok.py"], root, scratch)


SCENARIOS = [
    Scenario("model factory hangs", "hang", OVERFIT, 1, "building the model never",
             {"model": "fault_factories:hung_model"}, Fault(0, "model"), quick=True),
    Scenario("batch factory hangs", "hang", OVERFIT, 1, "building the batch never",
             {"batch": "fault_factories:hung_batch"}, Fault(0, "batch")),
    Scenario("training step hangs", "hang", OVERFIT, 1, "training was still running",
             {"model": "fault_factories:hangs_in_training_model"},
             Fault(0, "training")),
    Scenario("probe hangs", "hang", OVERFIT, 1, "probing (re-training",
             {"model": "fault_factories:hangs_when_probed_model", "lr": 1e-9,
              "max-steps": 3}, Fault(0, "probing")),
    Scenario("doctest example hangs", "hang", ["doctest", "hangs.py"], 1,
             f"hangs.py: timed out after {TIMEOUT:g} s", quick=True),
    Scenario("doctest example floods stdout", "hang", ["doctest", "floods.py"], 1,
             f"floods.py: timed out after {TIMEOUT:g} s"),
    Scenario("SIGTERM to the hook", "signal", OVERFIT, 143, "stopped by SIGTERM",
             HUNG, Fault(signal.SIGTERM, "model"), quick=True),
    Scenario("SIGHUP to the hook", "signal", OVERFIT, 129, "stopped by SIGHUP",
             HUNG, Fault(signal.SIGHUP, "model")),
    Scenario("Ctrl-C (SIGINT to the group)", "signal", OVERFIT, 130, "interrupted",
             HUNG, Fault(signal.SIGINT, "model", target="group")),
    Scenario("SIGKILL to the hook", "signal", OVERFIT, -9, "", HUNG,
             Fault(signal.SIGKILL, "model"), quick=True, after=_next_run_sweeps),
    Scenario("SIGKILL to the worker (OOM killer)", "signal", OVERFIT, 1,
             "out-of-memory killer", HUNG,
             Fault(signal.SIGKILL, "model", target="worker"), quick=True),
    Scenario("SIGSEGV in the model's forward", "crash", OVERFIT, 1,
             "killed by SIGSEGV (a segmentation fault) while training",
             {"model": "fault_factories:crashing_model"}, quick=True),
    Scenario("factory raises KeyboardInterrupt", "input", OVERFIT, 1,
             "building the model raised KeyboardInterrupt",
             {"model": "fault_factories:interrupting_model"}),
    Scenario("stdout closed by its reader", "input", OVERFIT, 141, "",
             options={"close_stdout": True}, quick=True),
    Scenario("--json to a missing directory", "input",
             ["overfit", "--json", "missing/out.json"], 2, "no such directory",
             HUNG, quick=True),
]  # fmt: skip


def run(quick: bool) -> Section:
    chosen = [s for s in SCENARIOS if s.quick or not quick]
    rows, hang_worst, signal_worst, leftovers, good = [], 0.0, 0.0, [0, 0], 0
    for scenario in chosen:
        outcome, ok = _inject(scenario)
        good += ok
        if scenario.kind == "hang":
            hang_worst = max(hang_worst, outcome.seconds)
        if scenario.kind == "signal":
            signal_worst = max(signal_worst, outcome.seconds)
        leftovers[0] += len(outcome.processes)
        leftovers[1] += len(outcome.files)
        rows.append([scenario.name, scenario.code, outcome.code,
                     "yes" if ok else "NO", round(outcome.seconds, 1),
                     len(outcome.processes), len(outcome.files)])  # fmt: skip
    return Section(
        title="reliability: faults injected into the real CLI",
        columns=["fault", "expected exit", "exit", "as expected", "seconds to exit",
                 "processes left", "files left"],  # fmt: skip
        rows=rows,
        notes=[
            f"{len(chosen)} faults injected, {good} outcomes as expected",
            f"worst time to exit after a hang started: {hang_worst:.1f} s (timeout"
            f" {TIMEOUT:g} s, grace 2.5 s); after a signal: {signal_worst:.1f} s",
            f"left behind: {leftovers[0]} processes, {leftovers[1]} temporary files"
            " (after SIGKILL of the hook: once the next run swept them)",
            "seconds to exit: from the hang's start or the signal, else from the start",
        ],
    )


def _inject(scenario: Scenario) -> tuple[Outcome, bool]:
    with tempfile.TemporaryDirectory(prefix="bench-reliability-") as scratch:
        root = write_project(
            Path(scratch, "project"), {"timeout": TIMEOUT, **scenario.keys}
        )
        _add_doctest_files(root)
        outcome = run_cli(
            scenario.args,
            root,
            Path(scratch, "scratch"),
            fault=scenario.fault,
            limit=120.0,
            env={"MLSMOKE_PYTHON": sys.executable},
            **scenario.options,
        )
        if scenario.after is not None:
            outcome.files = scenario.after(root, Path(scratch, "scratch")).files
        ok = outcome.code == scenario.code and scenario.says in outcome.output
        return outcome, ok and not outcome.problems()


def _add_doctest_files(root: Path) -> None:
    with (root / "pyproject.toml").open("a") as file:
        file.write(f"\n[tool.mlsmoke.doctest]\ntimeout = {TIMEOUT}\n")
    (root / "hangs.py").write_text(DOCTEST_HANG)
    (root / "floods.py").write_text(DOCTEST_FLOOD)
    (root / "ok.py").write_text(DOCTEST_OK)
