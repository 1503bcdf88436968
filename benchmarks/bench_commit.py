"""Commit latency in a project generated from the template, hooks installed and warm.

Two kinds of commit, each timed as ``git commit`` end to end and broken down per hook
(every hook is ``verbose``, so pre-commit prints its duration): (a) a commit touching
only the README; (b) a commit touching the model file, which makes the overfit gate
train again (its cache key holds the content of every watched file).
"""

from __future__ import annotations

import os
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
    readme, model = project.path / "README.md", project.package / "model.py"
    readme_text, model_text = readme.read_text(), model.read_text()
    kinds: dict[str, Callable[[int], Path]] = {
        "(a) README only": lambda i: rewrite(readme, f"{readme_text}\nRev {i}.\n"),
        "(b) model file": lambda i: rewrite(model, f"{model_text}\n\n# revision {i}\n"),
    }
    commits: dict[str, list[ProcessRun]] = {kind: [] for kind in kinds}
    for i in range(repeats):
        for kind, edit in kinds.items():
            commits[kind].append(commit(project, edit(i), f"{kind} {i}"))
    rows = per_hook_rows(commits, project.hook_ids())
    notes = [
        (f"median of {repeats} commits each" if repeats > 1 else "one commit each")
        + "; `git commit` wall time end to end, and"
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
        columns=["", *commits],
        rows=rows,
        notes=notes,
    )


def per_hook_rows(
    commits: dict[str, list[ProcessRun]], hooks: list[str]
) -> list[list[object]]:
    """A row per hook (blank: no files to check), then the sum and the total."""
    columns = []
    for runs in commits.values():
        durations = [hook_durations(run.stdout + run.stderr) for run in runs]
        column = {}
        for hook in hooks:
            values = [seconds[hook] for seconds in durations if hook in seconds]
            if values:
                column[hook] = statistics.median(values)
        column["sum of the hooks"] = sum(column.values())
        column["`git commit`, end to end"] = statistics.median(r.seconds for r in runs)
        columns.append(column)
    names = [*hooks, "sum of the hooks", "`git commit`, end to end"]
    return [
        [name, *(f"{column[name]:.2f}" if name in column else "" for column in columns)]
        for name in names
    ]


def warm_up(project: TemplateProject) -> None:
    """One commit through every hook, so that caches and files on disk are warm."""
    readme = project.path / "README.md"
    commit(project, rewrite(readme, readme.read_text() + "\nWarm-up.\n"), "warm up")


def commit(project: TemplateProject, changed: Path, message: str) -> ProcessRun:
    git(project.path, "add", str(changed))
    run = run_process(
        ["git", "commit", "-m", message],
        cwd=project.path,
        env={**_environ(project), **GIT_IDENTITY},
    )
    return run.check(f"git commit ({message})")


def rewrite(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _environ(project: TemplateProject) -> dict[str, str]:
    return {
        **os.environ,
        **project.env,
        "PRE_COMMIT_HOME": str(project.home),
        "PRE_COMMIT_COLOR": "never",
    }
