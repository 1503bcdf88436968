"""The catalog of training bugs through the gate: does every correct model pass, is
every bug caught, and is the diagnosis code right?

Each case runs through ``mlsmoke.overfit.check`` on the CPU at the commit tier, probes
and checks included, so the seconds are what a failing commit costs; ``probes`` counts
the short training re-runs the diagnoses asked for. ``--quick`` runs
one case per expected code. Run alone: ``python -m benchmarks.bench_catalog``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.report import Section

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.catalog.cases import CASES, Case  # noqa: E402
from tests.catalog.runner import Outcome, run_case  # noqa: E402

COLUMNS = [
    "case",
    "architecture",
    "bug",
    "expected code",
    "code given",
    "warnings",
    "steps",
    "probes",
    "seconds",
]


def run(quick: bool) -> Section:
    outcomes = [run_case(case) for case in selected(quick)]
    return Section(
        title="Diagnosis catalog (CPU, commit tier)",
        columns=COLUMNS,
        rows=[row(outcome) for outcome in outcomes],
        notes=summary(outcomes),
    )


def selected(quick: bool) -> list[Case]:
    if not quick:
        return list(CASES)
    seen: set[tuple[str, frozenset[str]]] = set()
    chosen = []
    for case in CASES:
        key = (case.code, case.warnings)
        if key not in seen:
            seen.add(key)
            chosen.append(case)
    return chosen


def row(outcome: Outcome) -> list[object]:
    case = outcome.case
    given = outcome.code if outcome.code == case.code else f"**{outcome.code}**"
    expected_warnings = ", ".join(sorted(case.warnings))
    warnings = ", ".join(sorted(outcome.warnings)) or "-"
    if outcome.warnings != case.warnings:
        warnings = f"**{warnings}** (expected {expected_warnings or 'none'})"
    return [
        case.name,
        case.architecture,
        case.bug or "(correct model)",
        case.code,
        given,
        warnings,
        outcome.result.steps,
        _probes(outcome),
        round(outcome.seconds, 2),
    ]


def _probes(outcome: Outcome) -> str:
    if not outcome.probe_steps:
        return "-"
    return f"{len(outcome.probe_steps)} ({sum(outcome.probe_steps)} steps)"


def summary(outcomes: list[Outcome]) -> list[str]:
    correct = [o for o in outcomes if o.case.kind == "correct"]
    bugs = [o for o in outcomes if o.case.kind == "bug"]
    warned = [o for o in outcomes if o.case.warnings]
    passed = sum(o.result.passed and not o.warnings for o in correct)
    caught = sum(o.result.verdict == "fail" for o in bugs)
    right = sum(o.code == o.case.code for o in bugs)
    shown = sum(o.warnings == o.case.warnings for o in warned)
    seconds = sum(o.seconds for o in outcomes)
    slowest = max(outcomes, key=lambda o: o.seconds)
    trained = [o for o in bugs if o.result.steps]
    costliest = max(trained, key=lambda o: o.probe_cost, default=None)
    lines = [
        f"correct models passed, with no warning: {passed}/{len(correct)}",
        f"bugs caught (verdict fail): {caught}/{len(bugs)}",
        f"right diagnosis code: {right}/{len(bugs)} ({_percent(right, len(bugs))})",
        f"expected warnings shown: {shown}/{len(warned)}",
        f"{len(outcomes)} cases in {seconds:.1f} s; slowest {slowest.case.name}"
        f" ({slowest.seconds:.1f} s, training plus probes)",
    ]
    if costliest is not None:
        lines.append(
            f"probes cost at most {costliest.probe_cost:.1f}x the run's own steps"
            f" ({costliest.case.name}: {len(costliest.probe_steps)} re-runs)"
        )
    return lines


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).to_markdown())
