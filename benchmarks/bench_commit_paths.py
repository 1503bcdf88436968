"""Commit latency, today's path and the new one side by side, in two projects generated
from the template alike.

Today's path: the warm worker off (``MLSMOKE_WORKER=0``), the ``warm-worker`` hook
left out of the config and, when the doctest hook has a pass cache (``--no-cache`` in
``mlsmoke doctest --help``), that cache off too. The new path: the template's config
and the defaults. Each project makes one commit through its hooks first, as a project
in use has; before every commit the gate's pass cache is emptied, so the gate trains
each time. Four commits, in this order, each in both projects:

(a) a prose change to the README, the worker stopped beforehand;
(b) a change to the model file, the worker stopped beforehand;
(c) a second change to the model file, the worker (new path) warm from (b);
(d) a change that breaks the model: it must be blocked, with the same verdict.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from benchmarks.measure import ProcessRun, run_process
from benchmarks.precommit import GIT_IDENTITY, git, hook_durations
from benchmarks.report import Section
from benchmarks.template_project import CONFIG, TemplateProject, template_project

PATHS = ("today", "new")
KINDS = (
    "(a) README only",
    "(b) model file",
    "(c) model file again, worker warm",
    "(d) model broken",
)
BREAK = ("h = self.embed(x)  #", "h = self.embed(x) * 0  #")  # the inputs erased
_VERDICT = re.compile(r"^overfit \S+: (PASS|FAIL).*$", re.M)


def run(quick: bool) -> Section:
    projects = {path: _project(not quick, path) for path in PATHS}
    repeats = 1 if quick else 3
    runs: dict[tuple[str, str], list[ProcessRun]] = {}
    for i in range(repeats):
        for kind in KINDS:
            for path, project in projects.items():
                edit = _edits(project, i)[kind]
                if kind in KINDS[:2]:
                    stop_workers(project)
                expect_failure = kind == KINDS[3]
                run_ = commit(project, path, edit(), f"{kind} {i}", expect_failure)
                runs.setdefault((kind, path), []).append(run_)
                if expect_failure:
                    _restore(project)
    for project in projects.values():
        stop_workers(project)
    hooks = projects["new"].hook_ids()
    return Section(
        title="Commit latency, today's path and the new one (seconds)",
        columns=["", *(f"{kind}: {path}" for kind in KINDS for path in PATHS)],
        rows=per_hook_rows(runs, hooks),
        notes=_notes(runs, repeats, quick, projects["today"]),
    )


def _project(all_hooks: bool, path: str) -> TemplateProject:
    project = template_project(all_hooks, copy=f"paths-{path}")
    if path == "today":
        _todays_config(project)
    _append(project.path / "README.md", "\nIn use.\n")
    _append(project.package / "model.py", "\n\n# in use\n")
    commit(project, path, project.path, "a commit beforehand")
    return project


def _todays_config(project: TemplateProject) -> None:
    """The config without the hook today's path did not have, and with the doctest
    pass cache off when the hook has one."""
    config = project.path / CONFIG
    document = yaml.safe_load(config.read_text())
    for repo in document["repos"]:
        repo["hooks"] = [hook for hook in repo["hooks"] if hook["id"] != "warm-worker"]
        for hook in repo["hooks"]:
            if hook["id"] == "doctest" and doctest_has_cache():
                hook["args"] = [*hook.get("args", []), "--no-cache"]
    document["repos"] = [repo for repo in document["repos"] if repo["hooks"]]
    config.write_text(yaml.safe_dump(document, sort_keys=False))
    git(project.path, "add", CONFIG)
    git(project.path, "commit", "--quiet", "--no-verify", "-m", "today's config")


def doctest_has_cache() -> bool:
    help_ = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "doctest", "--help"],
        capture_output=True,
        text=True,
    )
    return "--no-cache" in help_.stdout


def _edits(project: TemplateProject, i: int) -> dict[str, Callable[[], Path]]:
    readme, model = project.path / "README.md", project.package / "model.py"
    return {
        KINDS[0]: lambda: _append(readme, f"\nRevision {i}.\n"),
        KINDS[1]: lambda: _append(model, f"\n\n# revision {i}\n"),
        KINDS[2]: lambda: _append(model, f"\n\n# revision {i}, again\n"),
        KINDS[3]: lambda: _replace(model, *BREAK),
    }


def _append(path: Path, text: str) -> Path:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    return path


def _replace(path: Path, old: str, new: str) -> Path:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise RuntimeError(f"{path}: {old!r} not found; the model changed")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _restore(project: TemplateProject) -> None:
    git(project.path, "reset", "--quiet", "--hard")


def commit(
    project: TemplateProject,
    path: str,
    changed: Path,
    message: str,
    expect_failure: bool = False,
) -> ProcessRun:
    shutil.rmtree(project.path / ".mlsmoke" / "overfit", ignore_errors=True)
    git(project.path, "add", str(changed))
    env = {**_environ(project), **GIT_IDENTITY}
    env.pop("MLSMOKE_WORKER", None)  # the default: on
    if path == "today":
        env["MLSMOKE_WORKER"] = "0"
    run_ = run_process(["git", "commit", "-m", message], cwd=project.path, env=env)
    if not expect_failure:
        return run_.check(f"git commit ({message}, {path})")
    if run_.returncode == 0:
        raise RuntimeError(f"git commit ({message}, {path}) was not blocked")
    return run_


def stop_workers(project: TemplateProject) -> None:
    run_process(
        [sys.executable, "-m", "mlsmoke", "worker", "stop", "--project", "."],
        cwd=project.path,
        env=_environ(project),
    )


def per_hook_rows(
    runs: dict[tuple[str, str], list[ProcessRun]], hooks: list[str]
) -> list[list[object]]:
    """A row per hook (blank: no files to check), then the sum and the total."""
    columns = []
    for kind in KINDS:
        for path in PATHS:
            column = {}
            durations = [hook_durations(r.stdout + r.stderr) for r in runs[kind, path]]
            for hook in hooks:
                values = [seconds[hook] for seconds in durations if hook in seconds]
                if values:
                    column[hook] = statistics.median(values)
            column["sum of the hooks"] = sum(column.values())
            column["`git commit`, end to end"] = statistics.median(
                r.seconds for r in runs[kind, path]
            )
            columns.append(column)
    names = [*hooks, "sum of the hooks", "`git commit`, end to end"]
    return [
        [name, *(f"{c[name]:.2f}" if name in c else "" for c in columns)]
        for name in names
    ]


def verdicts(run_: ProcessRun) -> list[str]:
    """The gate's verdict lines in a commit's output."""
    output = run_.stdout + run_.stderr
    return [match.group(0).strip() for match in _VERDICT.finditer(output)]


def _notes(
    runs: dict[tuple[str, str], list[ProcessRun]],
    repeats: int,
    quick: bool,
    today: TemplateProject,
) -> list[str]:
    broken = {path: verdicts(runs[KINDS[3], path][0]) for path in PATHS}
    same = broken["today"] == broken["new"] and broken["new"]
    notes = [
        (f"median of {repeats} commits each" if repeats > 1 else "one commit each")
        + "; the gate's pass cache emptied before every commit; `git commit` wall"
        " time end to end and each hook's duration as pre-commit prints it",
        "today: MLSMOKE_WORKER=0, no warm-worker hook"
        + (", doctest --no-cache" if doctest_has_cache() else " (no doctest cache)")
        + "; new: the template's config and the defaults; one commit through the"
        " hooks made beforehand in each project",
        "(d) blocked on both paths, "
        + ("with the same verdict: " if same else "verdicts DIFFER: ")
        + "; ".join(f"{path}: {' / '.join(v) or '?'}" for path, v in broken.items()),
    ]
    if quick:
        notes.append("--quick: mlsmoke's three hooks only, one commit each")
    return notes


def _environ(project: TemplateProject) -> dict[str, str]:
    return {
        **os.environ,
        **project.env,
        "PRE_COMMIT_HOME": str(project.home),
        "PRE_COMMIT_COLOR": "never",
    }
