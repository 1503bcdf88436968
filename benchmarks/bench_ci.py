"""The hooks run the way pre-commit.ci runs them, in a project generated from the
template: the environments are installed first (with network), then every hook that is
not under the template's ``ci: skip`` runs on all files with no network, in a network
namespace of its own (``unshare --net``). pre-commit.ci stops a run at 180 s.
"""

from __future__ import annotations

import statistics

from benchmarks.precommit import (
    hook_durations,
    mlsmoke_hook_environment,
    network_namespace_works,
    pre_commit,
)
from benchmarks.report import Section
from benchmarks.template_project import template_project

LIMIT_SECONDS = 180
INSTALL_LIMIT_SECONDS = 120


def run(quick: bool) -> Section:
    project = template_project(all_hooks=not quick)
    skip = project.ci_skip()
    offline = network_namespace_works()
    runs = [
        pre_commit(
            project.path,
            project.home,
            "run",
            "--all-files",
            env={**project.env, "SKIP": ",".join(skip)},
            offline=offline,
        ).check("pre-commit run --all-files")
        for _ in range(1 if quick else 3)
    ]
    seconds = statistics.median(run.seconds for run in runs)
    durations = hook_durations(runs[0].stdout)
    ran = [hook for hook in project.hook_ids() if hook not in skip]
    install = project.install.seconds + mlsmoke_hook_environment().install.seconds
    rows = [
        [
            "install every hook environment (network on)",
            f"{install:.1f}",
            f"~{INSTALL_LIMIT_SECONDS}",
            "yes" if install <= INSTALL_LIMIT_SECONDS else "**no**",
        ],
        [
            f"run {len(ran)} hook{'s' if len(ran) != 1 else ''} on all files"
            f" ({'no network' if offline else 'network on'})",
            f"{seconds:.1f}",
            str(LIMIT_SECONDS),
            "yes" if seconds <= LIMIT_SECONDS else "**no**",
        ],
    ]
    breakdown = ", ".join(f"{hook} {durations.get(hook, 0):.2f}" for hook in ran)
    notes = [
        f"skipped as the template's `ci: skip` says: {', '.join(skip)}",
        f"per hook (s, first run): {breakdown}",
        f"installing: mlsmoke's environment"
        f" {mlsmoke_hook_environment().install.seconds:.1f} s, then the others"
        f" {project.install.seconds:.1f} s (pip's wheel cache is the machine's own)",
    ]
    if not offline:
        notes.append("`unshare --net` does not work here: the run had network")
    if quick:
        notes.append(
            "--quick: mlsmoke's hooks only; the full run adds pre-commit-hooks,"
            " black, flake8 and shellcheck from PyPI"
        )
    return Section(
        title="A pre-commit.ci-like run of the template project",
        columns=["step", "seconds", "pre-commit.ci limit (s)", "within"],
        rows=rows,
        notes=notes,
    )
