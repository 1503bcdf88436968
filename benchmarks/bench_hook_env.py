"""mlsmoke's hook environment as pre-commit builds it: install time and size on disk.

A fresh PRE_COMMIT_HOME and ``pre-commit install-hooks`` on a config whose ``repo:`` is
this checkout committed to a scratch repository, as pre-commit.ci would install it (it
refuses environments over 250 MiB and installs over about 2 minutes).
"""

from __future__ import annotations

from benchmarks.precommit import mlsmoke_hook_environment
from benchmarks.report import Section

LIMIT_MIB = 250
LIMIT_SECONDS = 120


def run(quick: bool) -> Section:
    built = mlsmoke_hook_environment()
    rows = [
        [
            "install time (`pre-commit install-hooks`)",
            f"{built.install.seconds:.1f} s",
            f"~{LIMIT_SECONDS} s",
            _within(built.install.seconds, LIMIT_SECONDS),
        ],
        [
            "environment size on disk (py_env-*)",
            f"{built.environment_mib:.1f} MiB",
            f"{LIMIT_MIB} MiB",
            _within(built.environment_mib, LIMIT_MIB),
        ],
        [
            "whole PRE_COMMIT_HOME (clone + environment)",
            f"{built.home_mib:.1f} MiB",
            "",
            "",
        ],
    ]
    notes = [
        "one fresh build (pip's wheel cache is the machine's own); the environment"
        " holds mlsmoke only: torch and the project's dependencies stay in the"
        " project's interpreter"
    ]
    return Section(
        title="mlsmoke's hook environment vs pre-commit.ci's limits",
        columns=["measure", "mlsmoke", "pre-commit.ci limit", "within"],
        rows=rows,
        notes=notes,
    )


def _within(value: float, limit: float) -> str:
    return f"yes ({value / limit:.0%} of it)" if value <= limit else "**no**"
