"""Commit latency in a project generated from the template, hooks installed and warm.

Two kinds of commit, each timed as ``git commit`` end to end and broken down per hook
(every hook is ``verbose``, so pre-commit prints its duration): (a) a commit touching
only the README; (b) a commit touching the model file, which makes the overfit gate
train again (its cache key holds the content of every watched file).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from benchmarks.measure import ProcessRun, run_process
from benchmarks.precommit import GIT_IDENTITY, git, hook_durations
from benchmarks.report import Section
from benchmarks.template_project import TemplateProject, template_project


def run(quick: bool) -> Section:
    project = template_project(all_hooks=not quick)
    repeats = 1 if quick else 3
    warm_up(project)
    kinds: dict[str, Callable[[int], Path]] = {
        "(a) README only": lambda i: append(
            project.path / "README.md", f"\nRev {i}.\n"
        ),
        "(b) model file": lambda i: append(
            project.package / "model.py", f"# revision {i}\n"
        ),
    }
    commits: dict[str, list[ProcessRun]] = {kind: [] for kind in kinds}
    for i in range(repeats):
        for kind, edit in kinds.items():
            commits[kind].append(commit(project, edit(i), f"{kind} {i}"))
    hooks = project.hook_ids()
    rows = [per_hook_row(kind, runs, hooks) for kind, runs in commits.items()]
    notes = [
        f"median of {repeats} commits each; `git commit` wall time end to end, and"
        " each hook's duration as pre-commit prints it (blank: the hook had no files"
        " to check); the environments were installed and one commit made beforehand"
    ]
    if quick:
        notes.append(
            "--quick: mlsmoke's three hooks only, one commit each; the full run adds"
            " pre-commit-hooks, black, flake8 and shellcheck from PyPI"
        )
    return Section(
        title="Commit latency in a project generated from the template (seconds)",
        columns=["commit", "git commit", *hooks],
        rows=rows,
        notes=notes,
    )


def per_hook_row(kind: str, runs: list[ProcessRun], hooks: list[str]) -> list[object]:
    durations = [hook_durations(run.stdout + run.stderr) for run in runs]
    cells = []
    for hook in hooks:
        values = [seconds[hook] for seconds in durations if hook in seconds]
        cells.append(f"{statistics.median(values):.2f}" if values else "")
    total = statistics.median(run.seconds for run in runs)
    return [kind, f"{total:.2f}", *cells]


def warm_up(project: TemplateProject) -> None:
    """One commit through every hook, so that caches and files on disk are warm."""
    commit(project, append(project.path / "README.md", "\n"), "warm up")


def commit(project: TemplateProject, changed: Path, message: str) -> ProcessRun:
    git(project.path, "add", str(changed))
    run = run_process(
        ["git", "commit", "-m", message],
        cwd=project.path,
        env={**_environ(project), **GIT_IDENTITY},
    )
    return run.check(f"git commit ({message})")


def append(path: Path, text: str) -> Path:
    with path.open("a", encoding="utf-8") as file:
        file.write(text)
    return path


def _environ(project: TemplateProject) -> dict[str, str]:
    import os

    return {
        **os.environ,
        **project.env,
        "PRE_COMMIT_HOME": str(project.home),
        "PRE_COMMIT_COLOR": "never",
    }
