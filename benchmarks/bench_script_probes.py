"""A failing gate in script mode: where its time goes, and its probes before and after
they shared a CPU budget and stopped once their answer was clear.

Workloads: the minGPT-shaped repository of the tests (``projects/adder/adder.py``
training through a library ``Trainer``), correct and with three mistakes, and, when
its snapshot is on disk, minGPT itself at lr 5e-4 and 5e-7. Each repeat runs the gate
once per side in a fresh process (``benchmarks/script_probe_profile.py``), sides
interleaved, one CPU thread. The verdicts must be the same on both sides; the failing
gate's CPU must stay within its budget (the run, then at most ``script_budget``'s
multiple of it, plus one launch of the script).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.measure import run_process
from benchmarks.report import Section

HERE = Path(__file__).resolve().parent
MINGPT = Path("/work/.mirror/karpathy+minGPT/repo")
SIDES = ("before", "after")
FIXTURE_STEPS = 300  # the tests' default max-steps
MINGPT_STEPS = 600


def run(quick: bool) -> Section:
    repeats = 1 if quick else 2
    rows, notes = [], []
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-probes-") as tmp:
        for index, (name, write) in enumerate(workloads(quick)):
            project = write(Path(tmp) / name.replace(" ", "-"))
            reports: dict[str, list[dict]] = {side: [] for side in SIDES}
            for repeat in range(1 if name.startswith("minGPT adder") else repeats):
                for side in SIDES if (index + repeat) % 2 == 0 else SIDES[::-1]:
                    reports[side].append(profile(project, side, Path(tmp)))
            rows.append(row(name, reports))
            notes.append(breakdown(name, reports["after"][0], reports["before"][0]))
    from benchmarks.machine import load_average

    return Section(
        title="A failing gate in script mode: probes before and after the CPU budget",
        columns=["workload", "verdict", "run CPU s",
                 "probes before: launches, steps, CPU s", "probes after",
                 "after / before", "after the run, CPU s of the budget"],
        rows=rows,
        notes=[
            f"median of {repeats} fresh processes per side (minGPT itself: 1),"
            " sides alternating which runs first;"
            f" OMP_NUM_THREADS=1; max-steps {FIXTURE_STEPS} (minGPT-shaped),"
            f" {MINGPT_STEPS} (minGPT); load average"
            f" {load_average()}; CPU is the gate's own process (its DataLoader"
            " workers excluded); `python -m benchmarks --only script_probes`",
            *notes,
        ],
    )  # fmt: skip


def profile(project: Path, side: str, tmp: Path) -> dict:
    out = tmp / f"{project.name}-{side}.json"
    command = [sys.executable, "-m", "benchmarks.script_probe_profile",
               str(project), side, str(out)]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(HERE.parent)}
    run_process(command, cwd=HERE.parent, env=env).check(f"{project.name} {side}")
    return json.loads(out.read_text())


def row(name: str, reports: dict[str, list[dict]]) -> list[object]:
    """The probes, side by side: the run is the same work on both sides, its CPU
    differs only by the machine's noise."""
    verdicts = {report["verdict"] for side in SIDES for report in reports[side]}
    run = statistics.median(r["launches"][0]["cpu"] for r in reports["after"])
    before, after = (_probes(reports[side]) for side in SIDES)
    budget = max(8.0 - run, _multiple() * run)
    failing = reports["after"][0]["verdict"] != "memorized"
    spent = statistics.median(
        r["cpu"] - r["launches"][0]["cpu"] for r in reports["after"]
    )
    within = "yes" if spent <= budget + _largest_launch(reports["after"]) else "NO"
    return [
        name,
        " / ".join(sorted(verdicts)) + ("" if len(verdicts) == 1 else " CHANGED"),
        f"{run:.1f}",
        f"{before[0]}, {before[1]}, {before[2]:.1f}",
        f"{after[0]}, {after[1]}, {after[2]:.1f}",
        f"{after[2] / before[2]:.2f}x" if before[2] else "-",
        f"{spent:.1f} of {budget:.1f}: {within}" if failing else "-",
    ]


def _probes(reports: list[dict]) -> tuple[int, int, float]:
    """Launches after the run, their steps, and their CPU seconds (medians)."""
    probes = [report["launches"][1:] for report in reports]
    return (
        len(probes[0]),
        sum(launch["steps"] for launch in probes[0]),
        statistics.median(sum(launch["cpu"] for launch in p) for p in probes),
    )


def breakdown(name: str, after: dict, before: dict) -> str:
    """Each launch: lr scale, steps, CPU to its second update (of it in imports), CPU
    of its steps."""

    def launches(report: dict) -> str:
        return "; ".join(
            f"x{launch['lr_scale']:g} {launch['steps']}/{launch['max_steps']} steps"
            f"{' (cut)' if launch['cut'] else ''}: launch {launch['launch']:.2f}"
            f" (imports {launch['imports']:.2f}) + steps {launch['steps_cpu']:.2f}"
            for launch in report["launches"]
        )

    return f"{name}: before: {launches(before)}. after: {launches(after)}"


def _largest_launch(reports: list[dict]) -> float:
    probes = [launch["launch"] for r in reports for launch in r["launches"][1:]]
    return max(probes, default=0.0)


def _multiple() -> float:
    from mlsmoke.overfit.script_budget import RUN_MULTIPLE

    return RUN_MULTIPLE


def workloads(quick: bool) -> list[tuple[str, Callable[[Path], Path]]]:
    sys.path.insert(0, str(HERE.parent / "tests" / "overfit"))
    import mingpt_shaped as shaped

    def fixture(*changes: object) -> Callable[[Path], Path]:
        def write(root: Path) -> Path:
            root.mkdir(parents=True)
            return _configured(shaped.write_mingpt_repo(root, *changes), FIXTURE_STEPS)

        return write

    chosen = [("minGPT-shaped, lr 5e-6", fixture(shaped.LR_TOO_LOW))]
    if quick:  # the one that probes
        return chosen
    chosen += [
        ("minGPT-shaped, correct", fixture()),
        ("minGPT-shaped, flipped loss", fixture(shaped.FLIPPED_LOSS)),
        ("minGPT-shaped, detached attention", fixture(shaped.DETACHED_ATTENTION)),
    ]
    if MINGPT.exists():
        chosen += [(f"minGPT adder, {name}", _mingpt(change))
                   for name, change in MINGPT_CHANGES.items()]  # fmt: skip
    return chosen


# file, old text, new text: the brief's mistakes in minGPT itself
MINGPT_CHANGES: dict[str, tuple[str, str, str] | None] = {
    "lr 5e-4": None,
    "lr 5e-7": ("projects/adder/adder.py", "rate = 5e-4", "rate = 5e-7"),
    "flipped loss": ("mingpt/model.py", "loss = F.cross", "loss = -F.cross"),
    "detached attention": ("mingpt/model.py", "self.c_proj(y))\n        return y\n",
                           "self.c_proj(y))\n        return y.detach()\n"),
}  # fmt: skip


def _mingpt(change: tuple[str, str, str] | None) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        root.mkdir(parents=True)
        archive = subprocess.run(["git", "--git-dir", str(MINGPT), "archive", "HEAD"],
                                 check=True, capture_output=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
        if change is not None:
            name, old, new = change
            text = (root / name).read_text()
            assert old in text, (name, old)
            (root / name).write_text(text.replace(old, new, 1))
        (root / "pyproject.toml").write_text(
            '[tool.mlsmoke.overfit]\nscript = "projects/adder/adder.py"\n'
            "args = [\"--system.work_dir='{out_dir}'\"]\n"
        )
        return _configured(root, MINGPT_STEPS)

    return write


def _configured(root: Path, max_steps: int) -> Path:
    """``max_steps``, and a timeout no loaded machine reaches, so that the CPU
    figures are not cut by the clock."""
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text() + f"max-steps = {max_steps}\ntimeout = 600\n"
    pyproject.write_text(text)
    return root
