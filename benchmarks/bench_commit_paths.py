"""Commit latency, today's path and the new one side by side, hook by hook, in two
projects generated from the template alike.

Today's path: mlsmoke as it was before the torchfix hook (``MLSMOKE_BENCH_TODAY``:
another git ref), and the config as it generated it: flake8 with TorchFix among its
``additional_dependencies``, no torchfix hook. The new path: this checkout and the
template's config (flake8 lean, TorchFix in mlsmoke's torchfix hook). Both with the
defaults (the worker on). Each project makes one commit through its hooks first, as a
project in use has; before every commit the gate's pass cache is emptied, so the gate
trains each time. Four commits, interleaved (each kind in both projects before the
next kind), in this order:

(a) a prose change to the README, the worker stopped beforehand;
(b) a change to the model file, the worker stopped beforehand;
(c) a second change to the model file, the worker warm from (b);
(d) a change that breaks the model: it must be blocked, with the same verdict.

After each round's (a), the new project commits a README change twice more through
the floors of ``commit_floor.py`` (pre-commit with no hook; with the pre-commit-hooks
basics only): what a prose commit costs before any hook of mlsmoke's.

``MLSMOKE_BENCH_ROUNDS`` sets the rounds (default 5), ``MLSMOKE_BENCH_BUSY=N`` runs N
CPU-bound processes beside them, and ``MLSMOKE_BENCH_TODAY`` names today's git ref.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from benchmarks.commit_floor import FLOORS, floor_commit, floor_configs
from benchmarks.machine import load_average
from benchmarks.measure import ProcessRun, run_process
from benchmarks.precommit import (
    GIT_IDENTITY,
    ROOT,
    HookRepo,
    commit_all,
    git,
    hook_durations,
    hook_repo,
    init_git_repo,
    scratch_dir,
)
from benchmarks.report import Section
from benchmarks.template_project import CONFIG, TemplateProject, template_project
from mlsmoke.adopt.upstream_basics import BASICS, upstream_repo
from mlsmoke.offline_hooks import local_hooks

PATHS = ("today", "new")
TODAY_REF = os.environ.get("MLSMOKE_BENCH_TODAY", "708ff88")
KINDS = (
    "(a) README only",
    "(b) model file",
    "(c) model file again, worker warm",
    "(d) model broken",
)
GOALS = {KINDS[0]: 0.5, KINDS[1]: 2.0, KINDS[2]: 2.0}  # seconds, end to end
BREAK = ("h = self.embed(x)  #", "h = self.embed(x) * 0  #")  # the inputs erased
TORCHFIX = "torchfix==0.7.0"  # as today's flake8 hook installed it
ROUNDS = int(os.environ.get("MLSMOKE_BENCH_ROUNDS", "5"))  # commits of each kind
# Other work on the machine: this many CPU-bound processes for the whole run.
BUSY = int(os.environ.get("MLSMOKE_BENCH_BUSY", "0"))
_VERDICT = re.compile(r"^overfit \S+: (PASS|FAIL).*$", re.M)
END_TO_END = "`git commit`, end to end"
# git, pre-commit's own start, and its health check of every hook environment (one
# `python -S` each, whether or not its hooks run)
OUTSIDE = "outside the hooks (git, pre-commit)"


def run(quick: bool) -> Section:
    loads = [load_average()]
    projects = {path: _project(not quick, path) for path in PATHS}
    repeats = 1 if quick else ROUNDS
    runs: dict[tuple[str, str], list[ProcessRun]] = {}
    floors = floor_configs(projects["new"].path / CONFIG)
    floor_runs: dict[str, list[ProcessRun]] = {floor: [] for floor in FLOORS}
    waits: dict[str, dict[str, list[tuple[float, float]]]] = {}
    with busy_processes(BUSY):
        for i in range(repeats):
            _round(i, projects, floors, runs, floor_runs, waits)
            loads.append(load_average())
    for project in projects.values():
        stop_workers(project)
    hooks = _hook_ids(projects)
    rows = per_hook_rows(runs, hooks)
    return Section(
        title="Commit latency, today's path and the new one (seconds)",
        columns=["", *(f"{kind}: {path}" for kind in KINDS for path in PATHS)],
        rows=rows + [ratio_row(runs), goal_row(runs)],
        notes=_notes(runs, repeats, quick, loads)
        + [_floor_note(runs, floor_runs), _ahead_note(waits)],
    )


def _round(
    i: int,
    projects: dict[str, TemplateProject],
    floors: dict[str, Path],
    runs: dict[tuple[str, str], list[ProcessRun]],
    floor_runs: dict[str, list[ProcessRun]],
    waits: dict[str, dict[str, list[tuple[float, float]]]],
) -> None:
    """Round ``i``: each kind of commit on both paths, in an order that alternates by
    round (the worker one path leaves busy does not always slow the other)."""
    order = PATHS if i % 2 == 0 else PATHS[::-1]
    for kind in KINDS:
        if kind == KINDS[1]:
            _commit_floors(projects["new"], floors, floor_runs, i)
        for path in order:
            project = projects[path]
            edit = _edits(project, i)[kind]
            if kind in KINDS[:2]:
                stop_workers(project)
            expect_failure = kind == KINDS[3]
            run_ = commit(project, path, edit(), f"{kind} {i}", expect_failure)
            runs.setdefault((kind, path), []).append(run_)
            if path == "new":
                ahead_timings(project, run_, waits.setdefault(kind, {}))
            if expect_failure:
                _restore(project)


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` processes that spin on a core each, stopped at the end."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _commit_floors(
    project: TemplateProject,
    floors: dict[str, Path],
    floor_runs: dict[str, list[ProcessRun]],
    i: int,
) -> None:
    env = {**_environ(project), **GIT_IDENTITY}
    for floor, hooks_dir in floors.items():
        readme = _append(project.path / "README.md", f"\nFloor {i}, {floor}.\n")
        message = f"{floor} {i}"
        floor_runs[floor].append(
            floor_commit(project.path, hooks_dir, readme, message, env)
        )


def _floor_note(
    runs: dict[tuple[str, str], list[ProcessRun]],
    floor_runs: dict[str, list[ProcessRun]],
) -> str:
    """The floors of (a), beside (a) on the new path, in the same rounds."""
    prose = _median(runs[KINDS[0], "new"])
    parts = [
        f"{floor} {_median(floor_runs[floor]):.2f} s"
        f" ({_median(floor_runs[floor]) / prose:.2f} of it)"
        for floor in FLOORS
    ]
    return (
        f"the floor under {KINDS[0]} (new, {prose:.2f} s), end to end, same rounds: "
        + "; ".join(parts)
    )


def ahead_timings(
    project: TemplateProject,
    run_: ProcessRun,
    into: dict[str, list[tuple[float, float]]],
) -> None:
    """Each hook run ahead in this commit: how long its run ahead took, and how long
    its hook waited for it (``.mlsmoke/ahead/<hook>.timing``)."""
    began = time.time() - run_.seconds
    for path in (project.path / ".mlsmoke" / "ahead").glob("*.timing"):
        timing = json.loads(path.read_text())
        if timing["taken"] < began or not timing["ran"]:
            continue  # another commit's
        ran = timing["ran"][1] - timing["ran"][0]
        waited = max(0.0, timing["taken"] - timing["asked"])
        into.setdefault(path.stem, []).append((ran, waited))


def _ahead_note(waits: dict[str, dict[str, list[tuple[float, float]]]]) -> str:
    """The medians of :func:`ahead_timings`, for the model-file commits."""
    parts = []
    for kind in KINDS[1:3]:
        for hook, pairs in sorted(waits.get(kind, {}).items()):
            ran = statistics.median(pair[0] for pair in pairs)
            waited = statistics.median(pair[1] for pair in pairs)
            parts.append(
                f"{kind[:3]} {hook} ran {ran:.2f} s, waited for {waited:.2f} s"
            )
    return "runs ahead on the new path (median): " + ("; ".join(parts) or "none")


def _hook_ids(projects: dict[str, TemplateProject]) -> list[str]:
    """Every hook of either project, in the new config's order, today's after."""
    ids = projects["new"].hook_ids()
    return ids + [hook for hook in projects["today"].hook_ids() if hook not in ids]


@functools.cache  # shared with bench_prose_commit in one run
def _project(all_hooks: bool, path: str) -> TemplateProject:
    project = template_project(all_hooks, copy=f"paths-{path}")
    if path == "today":
        _todays_config(project, todays_hook_repo())
    _append(project.path / "README.md", "\nIn use.\n")
    _append(project.package / "model.py", "\n\n# in use\n")
    commit(project, path, project.path, "a commit beforehand")
    return project


@functools.cache
def todays_hook_repo() -> HookRepo:
    """mlsmoke at ``TODAY_REF``, committed to a repository of its own."""
    dest = scratch_dir() / "mlsmoke-today"
    dest.mkdir()
    archive = subprocess.run(
        ["git", "archive", TODAY_REF], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    init_git_repo(dest)
    return HookRepo(dest, commit_all(dest, f"mlsmoke at {TODAY_REF}"))


def _todays_config(project: TemplateProject, today: HookRepo) -> None:
    """The config as today's mlsmoke wrote it: its own hooks from ``today`` (those it
    has); before the basics hook, pre-commit-hooks' own hooks in its place; before the
    torchfix hook, TorchFix back in flake8's environment."""
    config = project.path / CONFIG
    document = yaml.safe_load(config.read_text())
    todays_ids = {
        hook["id"]
        for hook in yaml.safe_load((today.path / ".pre-commit-hooks.yaml").read_text())
    }
    if BASICS not in todays_ids:
        document["repos"] = _upstream_basics(document["repos"])
    for repo in document["repos"]:
        if repo["repo"] == str(hook_repo().path):
            repo["repo"], repo["rev"] = str(today.path), today.rev
            repo["hooks"] = [hook for hook in repo["hooks"] if hook["id"] in todays_ids]
        if "torchfix" in todays_ids:
            continue  # a ref with the torchfix hook: the template's config as it is
        repo["hooks"] = [hook for hook in repo["hooks"] if hook["id"] != "torchfix"]
        for hook in repo["hooks"]:
            if hook["id"] == "flake8":
                plugins = hook.get("additional_dependencies", [])
                hook["additional_dependencies"] = [*plugins, TORCHFIX]
    config.write_text(yaml.safe_dump(document, sort_keys=False))
    _drop_unknown_tables(project.path / "pyproject.toml", today.path)
    git(project.path, "add", CONFIG, "pyproject.toml")
    git(project.path, "commit", "--quiet", "--no-verify", "-m", "today's config")


def _upstream_basics(repos: list[dict]) -> list[dict]:
    """``repos`` with the basics hook as pre-commit-hooks' own hooks, offline as the
    rest of the config is, after the repo that held it."""
    out = []
    for repo in repos:
        hooks = [hook for hook in repo["hooks"] if hook["id"] != BASICS]
        if hooks:
            out.append({**repo, "hooks": hooks})
        if len(hooks) < len(repo["hooks"]):
            local = local_hooks(upstream_repo())
            for hook in local["hooks"]:
                hook["verbose"] = True  # its duration printed, as every hook's
            out.append(local)
    return out


def _drop_unknown_tables(pyproject: Path, today: Path) -> None:
    """Without the ``[tool.mlsmoke.X]`` tables that today's mlsmoke does not know (the
    hooks it lacks), which it would refuse as unknown keys."""
    known = (today / "hooks" / "mlsmoke" / "config.py").read_text()
    kept, skipping = [], False
    for line in pyproject.read_text().splitlines(keepends=True):
        header = re.match(r"\[tool\.mlsmoke\.([\w-]+)", line)
        if line.startswith("["):
            skipping = bool(header) and f'"{header.group(1)}"' not in known
        if not skipping:
            kept.append(line)
    pyproject.write_text("".join(kept))


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
            column[END_TO_END] = _median(runs[kind, path])
            column[OUTSIDE] = column[END_TO_END] - column["sum of the hooks"]
            columns.append(column)
    names = [*hooks, "sum of the hooks", END_TO_END, OUTSIDE]
    return [
        [name, *(f"{c[name]:.2f}" if name in c else "" for c in columns)]
        for name in names
    ]


def _median(runs: list[ProcessRun]) -> float:
    return statistics.median(r.seconds for r in runs)


def ratio_row(runs: dict[tuple[str, str], list[ProcessRun]]) -> list[object]:
    """New over today, end to end, under each new column."""
    row: list[object] = ["new / today, end to end"]
    for kind in KINDS:
        ratio = _median(runs[kind, "new"]) / _median(runs[kind, "today"])
        row += ["", f"{ratio:.2f}"]
    return row


def goal_row(runs: dict[tuple[str, str], list[ProcessRun]]) -> list[object]:
    """Whether each path's median meets the issue's goal for that commit."""
    row: list[object] = ["goal (end to end)"]
    for kind in KINDS:
        goal = GOALS.get(kind)
        for path in PATHS:
            if goal is None:
                row.append("")
                continue
            met = _median(runs[kind, path]) <= goal
            row.append(f"<= {goal:.1f}: {'met' if met else 'NOT met'}")
    return row


def verdicts(run_: ProcessRun) -> list[str]:
    """The gate's verdict lines in a commit's output."""
    output = run_.stdout + run_.stderr
    return [match.group(0).strip() for match in _VERDICT.finditer(output)]


def _notes(
    runs: dict[tuple[str, str], list[ProcessRun]],
    repeats: int,
    quick: bool,
    loads: list[str],
) -> list[str]:
    broken = {path: verdicts(runs[KINDS[3], path][0]) for path in PATHS}
    same = broken["today"] == broken["new"] and broken["new"]
    spread = {
        kind: "; ".join(
            f"{path} {min(r.seconds for r in runs[kind, path]):.2f}"
            f"-{max(r.seconds for r in runs[kind, path]):.2f}"
            for path in PATHS
        )
        for kind in KINDS
    }
    notes = [
        (f"median of {repeats} commits each" if repeats > 1 else "one commit each")
        + ", the paths interleaved; the gate's pass cache emptied before every"
        " commit; `git commit` wall time end to end and each hook's duration as"
        " pre-commit prints it",
        f"today: mlsmoke at {TODAY_REF} and the config it wrote (at a ref without the"
        " basics hook, pre-commit-hooks' own hooks; without the torchfix hook, flake8"
        f" with {TORCHFIX}); new: this checkout and the template's config; the worker"
        " on in both; one commit through the hooks made beforehand in each project;"
        " the paths' order alternating by round",
        f"other work: {BUSY} CPU-bound processes for the whole run"
        " (MLSMOKE_BENCH_BUSY)",
        f"{os.cpu_count()} cores, the hooks at their default thread counts; load"
        " average (1, 5, 15 min) at the start and after each round: "
        + " | ".join(loads),
        "range, end to end: "
        + " / ".join(f"{kind} {text}" for kind, text in spread.items()),
        "(d) blocked on both paths, "
        + ("with the same verdict: " if same else "verdicts DIFFER: ")
        + "; ".join(f"{path}: {' / '.join(v) or '?'}" for path, v in broken.items()),
    ]
    if quick:
        notes.append("--quick: mlsmoke's hooks only, one commit each")
    return notes


def _environ(project: TemplateProject) -> dict[str, str]:
    return {
        **os.environ,
        **project.env,
        "PRE_COMMIT_HOME": str(project.home),
        "PRE_COMMIT_COLOR": "never",
    }
