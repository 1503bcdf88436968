"""A prose commit, today's mlsmoke and this checkout side by side: wall and CPU time.

Two projects generated from the template alike, as ``commit_paths`` makes them
(today's: mlsmoke at ``MLSMOKE_BENCH_TODAY``). In each round, each project commits a
README prose change with all its hooks and again with ``SKIP=doctest``, so the
doctest hook's share is the difference of the two medians. CPU time is user + system
of ``git commit`` and its children: other users' load inflates it less than wall
time. The README holds an example, so doctest runs on each commit and finds its pass
cached: its examples did not change, its prose did.
"""

from __future__ import annotations

import statistics

from benchmarks.bench_commit_paths import PATHS, TODAY_REF, _environ, _project
from benchmarks.machine import load_average
from benchmarks.measure import ProcessRun, run_process
from benchmarks.precommit import GIT_IDENTITY, git, hook_durations
from benchmarks.report import Section
from benchmarks.template_project import TemplateProject

SKIPS = {"all hooks": "", "SKIP=doctest": "doctest"}


def run(quick: bool) -> Section:
    loads = [load_average().split()[0]]
    projects = {path: _project(not quick, path) for path in PATHS}
    rounds = 1 if quick else 15
    runs: dict[tuple[str, str], list[ProcessRun]] = {}
    for i in range(rounds):
        for skip_name, skip in SKIPS.items():
            for path, project in projects.items():
                run_ = prose_commit(project, skip, f"prose {i}, {skip_name}")
                runs.setdefault((path, skip_name), []).append(run_)
        loads.append(load_average().split()[0])
    rows = [
        [f"{skip_name}: {measure}"]
        + [_median(runs[path, skip_name], measure) for path in PATHS]
        + [_ratio(runs, skip_name, measure)]
        for skip_name in SKIPS
        for measure in ("wall", "CPU")
    ]
    rows += [
        [f"doctest's share: {measure}"]
        + [_share(runs, path, measure) for path in PATHS]
        + [""]
        for measure in ("wall", "CPU")
    ]
    doctest_hook = [_doctest_hook(runs[path, "all hooks"]) for path in PATHS]
    rows.append(
        ["the doctest hook, as pre-commit times it: wall", *doctest_hook]
        + [round(doctest_hook[1] / doctest_hook[0], 2)]
    )
    return Section(
        title="A README prose commit, today's mlsmoke and this checkout (seconds)",
        columns=["", f"today ({TODAY_REF})", "new", "new / today"],
        rows=rows,
        notes=[
            f"median of {rounds} commits each, interleaved; CPU: user + system of"
            " `git commit` and its children; the hooks at their default thread counts",
            "doctest's share: all hooks minus SKIP=doctest, medians",
            f"load average: {', '.join(loads)}",
        ]
        + (["--quick: mlsmoke's hooks only, one commit each"] if quick else []),
    )


def prose_commit(project: TemplateProject, skip: str, message: str) -> ProcessRun:
    readme = project.path / "README.md"
    with readme.open("a") as file:
        file.write(f"\n{message}.\n")
    git(project.path, "add", "README.md")
    env = {**_environ(project), **GIT_IDENTITY, "SKIP": skip}
    env.pop("MLSMOKE_WORKER", None)  # the default: on
    argv = ["git", "commit", "-qm", message]
    return run_process(argv, cwd=project.path, env=env).check(f"git commit ({message})")


def _seconds(run_: ProcessRun, measure: str) -> float:
    return run_.seconds if measure == "wall" else run_.cpu_seconds


def _median(runs: list[ProcessRun], measure: str) -> float:
    return round(statistics.median(_seconds(run_, measure) for run_ in runs), 3)


def _doctest_hook(runs: list[ProcessRun]) -> float:
    durations = [hook_durations(run_.stdout + run_.stderr)["doctest"] for run_ in runs]
    return round(statistics.median(durations), 3)


def _ratio(runs: dict, skip_name: str, measure: str) -> float:
    today, new = (_median(runs[path, skip_name], measure) for path in PATHS)
    return round(new / today, 2)


def _share(runs: dict, path: str, measure: str) -> float:
    all_hooks, skipped = (_median(runs[path, name], measure) for name in SKIPS)
    return round(all_hooks - skipped, 3)
