"""The three catalogs of training bugs through the gate: does every correct model
pass, is every bug caught, and is the diagnosis code right?

The hand-written catalog (``tests/catalog/cases.py``: small torch models), the
library catalog (``tests/catalog/library/``: transformers and Lightning models built
from config objects, with the libraries' own tokenizer, collators and output classes)
and the families catalog (``tests/catalog/families/``: diffusion, flows, Gaussian
processes, graph networks, contrastive models, LoRA adapters, VQ codebooks: correct
by design in ways a naive rule takes for bugs, and real bugs of the same families).
Each case runs through the gate on the CPU at the commit tier, probes, interventions
and checks included, so the seconds are what a failing commit costs; the summary
gives the slowest failing case (a target: under 10 s), by the clock and by the
process's CPU time (what the machine's load cannot inflate; it counts every torch
thread, and the summary gives their number), against the bound the gate keeps by
design (``diagnosis_budget.py``), and end to end (``catalog_cli.py``: the same case
through ``mlsmoke overfit`` in a fresh process, imports included), and how many
passing cases ran an intervention
(interventions run only after a failure: none should).
Each catalog gives a summary row, a confusion matrix (expected code x code given) and
one row per case.
``--quick`` runs one case per expected code and warning, and skips the library and
families cases whose diagnosis needs probes. Run alone:
``python -m benchmarks.bench_catalog``.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks.catalog_cli import run_case_command
from benchmarks.machine import load_average
from benchmarks.report import Section
from mlsmoke.overfit.verdict import diagnosis_budget

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.catalog import cases as hand_written  # noqa: E402
from tests.catalog.cases import MEMORIZED, Case  # noqa: E402
from tests.catalog.runner import Outcome, run_case  # noqa: E402

TITLE = "Diagnosis catalogs (CPU, commit tier)"
SUMMARY_COLUMNS = [
    "catalog",
    "cases",
    "correct models passed",
    "bugs caught",
    "right code",
    "warnings shown",
    "false alarms",
    "missed bugs",
    "worst probe cost",
    "slowest case",
    "slowest failing case",
    "slowest failing case, CPU",
    "the same, end to end",
    "torch threads",
    "passes that ran an intervention",
    "whole catalog",
]
# The slowest failing case of any catalog, end to end, stays under this (issue 29).
FAILING_CASE_SECONDS = 10.0
CASE_COLUMNS = [
    "case",
    "architecture",
    "bug",
    "expected code",
    "code given",
    "warnings",
    "steps",
    "probes",
    "seconds",
    "CPU seconds",
]
CASE_MODULES = {
    "hand-written": "tests.catalog.cases",
    "library": "tests.catalog.library.cases",
    "families": "tests.catalog.families.cases",
}
# The codes whose diagnosis is read from an error or a cheap check, for --quick.
PROBE_FREE = {
    MEMORIZED,
    "data-error",
    "shape-error",
    "label-range-error",
    "out-of-memory",
    "no-gradient",
    "wrong-objective",
}


def run(quick: bool) -> Section:
    from tests.catalog.families import cases as families
    from tests.catalog.library import cases as library
    from tests.catalog.library.runner import run_case as run_library_case

    catalogs = [
        ("hand-written", selected(hand_written.CASES, quick), run_case),
        ("library", selected(library.CASES, quick, PROBE_FREE), run_library_case),
        ("families", selected(families.CASES, quick, PROBE_FREE), run_library_case),
    ]
    rows, tables = [], []
    notes = [f"load average at the start: {load_average()}"]
    for name, chosen, runner in catalogs:
        outcomes = run_all(chosen, runner)
        rows.append(summary_row(name, outcomes, end_to_end(name, outcomes)))
        notes += misses(name, outcomes)
        tables.append(confusion(f"{name}: expected code x code given", outcomes))
        tables.append(Section(f"{name}: every case", CASE_COLUMNS, case_rows(outcomes)))
    if len(notes) == 1:
        notes.append("every case got its expected code and warnings")
    notes.append(f"load average at the end: {load_average()}")
    notes.append(
        "a failing gate's run, probes and interventions take at most"
        f" {diagnosis_budget.FAILING_GATE_CPU_SECONDS:g} s of CPU time together (or"
        f" {diagnosis_budget.RUN_MULTIPLE:g} x a longer run's own time after it), by"
        " design; the clock adds whatever the machine's load does"
    )
    notes.append(
        "end to end: the slowest failing case again, as `mlsmoke overfit --no-cache`"
        " in a fresh process with the worker off (the interpreter's start, torch's"
        " import and the catalog module's, which imports every library its cases"
        ' use, included), on the catalog\'s torch threads; "importing the catalog" is'
        " a fresh interpreter importing that module alone, which a project that"
        " needs one library of them does not pay in full"
    )
    return Section(TITLE, SUMMARY_COLUMNS, rows, notes, tables)


def selected(
    cases: list[Case], quick: bool, codes: set[str] | None = None
) -> list[Case]:
    if not quick:
        return list(cases)
    seen: set[tuple[str, frozenset[str]]] = set()
    chosen = []
    for case in cases:
        key = (case.code, case.warnings)
        if key not in seen and (codes is None or case.code in codes):
            seen.add(key)
            chosen.append(case)
    return chosen


def run_all(cases: list[Case], runner: Callable[[Case], Outcome]) -> list[Outcome]:
    return [runner(case) for case in cases]


def end_to_end(name: str, outcomes: list[Outcome]) -> str:
    """The slowest failing case through the command, with the code it gave."""
    failing = [o for o in outcomes if o.result.verdict == "fail"]
    if not failing:
        return "-"
    slowest = max(failing, key=lambda o: o.seconds)
    threads = None if name == "hand-written" else 1
    run = run_case_command(CASE_MODULES[name], slowest.case, threads)
    within = "under" if run.seconds < FAILING_CASE_SECONDS else "OVER"
    return (
        f"{run.seconds:.1f} s, {run.cpu_seconds:.1f} s CPU, of which"
        f" {run.import_seconds:.1f} s importing the catalog ({slowest.case.name}:"
        f" {run.code}; {within} {FAILING_CASE_SECONDS:g} s)"
    )


def summary_row(name: str, outcomes: list[Outcome], command: str) -> list[object]:
    correct = [o for o in outcomes if o.case.kind == "correct"]
    expected_pass = [o for o in outcomes if o.case.code == MEMORIZED]
    bugs = [o for o in outcomes if o.case.kind == "bug"]
    expected = sum(len(o.case.warnings) for o in outcomes)
    shown = sum(len(o.case.warnings & o.warnings) for o in outcomes)
    extra = sum(len(o.warnings - o.case.warnings) for o in outcomes)
    right = sum(o.code == o.case.code for o in bugs)
    trained = [o for o in bugs if o.result.steps]
    costliest = max(trained, key=lambda o: o.probe_cost, default=None)
    slowest = max(outcomes, key=lambda o: o.seconds)
    failing = [o for o in outcomes if o.result.verdict == "fail"]
    slowest_failing = max(failing, key=lambda o: o.seconds, default=None)
    costliest_failing = max(failing, key=lambda o: o.cpu_seconds, default=None)
    passes = [o for o in outcomes if o.result.passed]
    intervened = sum(ran_an_intervention(o) for o in passes)
    cost = "-"
    if costliest is not None:
        cost = f"{costliest.probe_cost:.1f}x ({costliest.case.name})"
    return [
        name,
        len(outcomes),
        f"{sum(o.result.passed and not o.warnings for o in correct)}/{len(correct)}",
        f"{sum(o.result.verdict == 'fail' for o in bugs)}/{len(bugs)}",
        f"{right}/{len(bugs)} ({_percent(right, len(bugs))})",
        f"{shown}/{expected}, {extra} unexpected",
        sum(not o.result.passed for o in expected_pass),
        sum(o.result.verdict != "fail" for o in bugs),
        cost,
        f"{slowest.seconds:.1f} s ({slowest.case.name})",
        _slowest_failing(slowest_failing, "seconds"),
        _slowest_failing(costliest_failing, "cpu_seconds"),
        command,
        ", ".join(str(n) for n in sorted({o.threads for o in outcomes})),
        f"{intervened}/{len(passes)}",
        f"{sum(o.seconds for o in outcomes):.0f} s",
    ]


def ran_an_intervention(outcome: Outcome) -> bool:
    """The gate ran an intervention (each leaves a note, shown with -v)."""
    return any(note.startswith("intervention ") for note in outcome.result.notes)


def _slowest_failing(outcome: Outcome | None, measure: str) -> str:
    if outcome is None:
        return "-"
    seconds = getattr(outcome, measure)
    within = "under" if seconds < FAILING_CASE_SECONDS else "OVER"
    return f"{seconds:.1f} s ({outcome.case.name}; {within} {FAILING_CASE_SECONDS:g} s)"


def misses(name: str, outcomes: list[Outcome]) -> list[str]:
    return [
        f"{name} {o.case.name}: expected {_label(o.case.code, o.case.warnings)},"
        f" given {_label(o.code, o.warnings)}"
        for o in outcomes
        if not o.right
    ]


def confusion(title: str, outcomes: list[Outcome]) -> Section:
    counts = Counter((o.case.code, o.code) for o in outcomes)
    expected = sorted({o.case.code for o in outcomes}, key=_code_order)
    given = sorted({o.code for o in outcomes}, key=_code_order)
    rows = [[code, *(counts[code, g] or "" for g in given)] for code in expected]
    return Section(title, ["expected \\ given", *given], rows)


def _code_order(code: str) -> tuple[int, str]:
    return (code != MEMORIZED, code)


def case_rows(outcomes: list[Outcome]) -> list[list[object]]:
    rows = []
    for outcome in outcomes:
        case = outcome.case
        given = outcome.code if outcome.code == case.code else f"**{outcome.code}**"
        warnings = ", ".join(sorted(outcome.warnings)) or "-"
        if outcome.warnings != case.warnings:
            expected = ", ".join(sorted(case.warnings)) or "none"
            warnings = f"**{warnings}** (expected {expected})"
        rows.append(
            [
                case.name,
                case.architecture,
                case.bug or "(correct model)",
                case.code,
                given,
                warnings,
                outcome.result.steps,
                _probes(outcome),
                round(outcome.seconds, 2),
                round(outcome.cpu_seconds, 2),
            ]
        )
    return rows


def _probes(outcome: Outcome) -> str:
    if not outcome.probe_steps:
        return "-"
    return f"{len(outcome.probe_steps)} ({sum(outcome.probe_steps)} steps)"


def _label(code: str, warnings: frozenset[str]) -> str:
    return code + (f" + {', '.join(sorted(warnings))}" if warnings else "")


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).to_markdown())
