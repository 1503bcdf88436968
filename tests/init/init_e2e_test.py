"""``mlsmoke init`` on a legacy repository: real pre-commit passes on day one, the debt
is reported, fixing a file shrinks the baseline by exactly that file, and new files
still meet every rule."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from adoption import PROJECT_ENV, Adopted, PreCommit, mlsmoke
from legacy_repo import PYPROJECT

from gitrepo import commit_all, git
from pre_commit_output import passed_hooks
from mlsmoke.adopt.baselines import Project

pytestmark = pytest.mark.e2e

EVERY_HOOK = {
    "check yaml",
    "trailing-whitespace",
    "end-of-file-fixer",
    "black",
    "flake8",
    "shellcheck",
    "bash strict mode",
    "doctest",
}


def test_all_files_pass_right_after_init(adopted: Adopted, pre_commit: PreCommit):
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ours = {"black", "flake8", "shellcheck", "bash strict mode", "doctest"}
    assert ours <= passed_hooks(ran.stdout), ran.stdout


def test_init_keeps_the_teams_config_and_comments(adopted: Adopted):
    text = (adopted.path / ".pre-commit-config.yaml").read_text()
    for kept in ("# (Ask in #infra", "rev: v6.0.0  # pinned on purpose", "# end of"):
        assert kept in text
    assert "no-todo-fixme" in text
    assert "# - id: overfit-batch" in text
    assert "skip: [warm-worker, doctest, overfit-batch]" in text


def test_init_reports_the_debt_of_every_tool(adopted: Adopted):
    for expected in (
        "flake8",
        "src/legacy_pkg/model.py  F401",
        "shellcheck",
        "scripts/train.sh",
        "bash-strict-mode",
        "doctest",
        "docs/usage.md",
        "black",
        "trailing-whitespace",
        "NOTES.txt",
    ):
        assert expected in adopted.init_output, adopted.init_output


def test_debt_prints_what_the_baselines_hold(adopted: Adopted):
    ran = mlsmoke(adopted.path, "debt")
    assert ran.returncode == 0, ran.stderr
    table = "Baselines" + adopted.init_output.split("Baselines", 1)[1]
    table = table.split("Running the gate once")[0]
    assert ran.stdout == re.sub(r" of \d+", "", table)
    assert "src/legacy_pkg/utils.py  E201,E202,E231" in ran.stdout


def test_second_init_changes_nothing(adopted_copy: Adopted):
    ran = mlsmoke(adopted_copy.path, "init")
    assert ran.returncode == 0, ran.stderr
    assert "wrote: nothing: already adopted (every hook is wired" in ran.stdout
    assert git(adopted_copy.path, "status", "--porcelain") == ""


def test_fixing_one_file_shrinks_the_baseline_by_exactly_that_file(
    adopted_copy: Adopted, pre_commit: PreCommit
):
    before = Project.load(adopted_copy.path).read()
    script = adopted_copy.path / "scripts" / "train.sh"
    script.write_text('#!/bin/bash\nset -euo pipefail\npython train.py --data "$1"\n')
    ran = mlsmoke(adopted_copy.path, "debt", "--update")
    assert ran.returncode == 0, ran.stderr
    after = Project.load(adopted_copy.path).read()
    expected = {
        tool: {
            path: codes for path, codes in files.items() if path != "scripts/train.sh"
        }
        for tool, files in before.items()
    }
    assert after == {tool: files for tool, files in expected.items() if files}
    assert "1 file left a baseline" in ran.stdout  # strict mode's and shellcheck's
    commit_all(adopted_copy.path, "fix train.sh")
    ran = pre_commit(adopted_copy, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_new_file_with_a_violation_is_still_blocked(
    adopted_copy: Adopted, pre_commit: PreCommit
):
    new = adopted_copy.path / "src" / "legacy_pkg" / "fresh.py"
    new.write_text("import os\n")
    script = adopted_copy.path / "scripts" / "deploy.sh"
    script.write_text("#!/bin/bash\necho $1\n")
    git(adopted_copy.path, "add", "--all")
    ran = pre_commit(adopted_copy, "--files", str(new), str(script))
    assert ran.returncode == 1, ran.stdout
    assert "fresh.py:1:1: F401" in ran.stdout
    assert "deploy.sh" in ran.stdout and "SC2086" in ran.stdout
    failed = {
        line.split("...")[0] for line in ran.stdout.splitlines() if "Failed" in line
    }
    assert {"flake8", "shellcheck", "bash strict mode"} <= {f.strip() for f in failed}


def test_the_printed_black_command_formats_and_removes_black_s_baseline(
    adopted_copy: Adopted,
):
    command = next(
        line.split("goes with: ", 1)[1]
        for line in adopted_copy.init_output.splitlines()
        if "black's baseline goes with" in line
    )
    env = {**os.environ, **PROJECT_ENV}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    ran = subprocess.run(
        ["bash", "-c", command], cwd=adopted_copy.path, env=env, capture_output=True
    )
    assert ran.returncode == 0, ran.stderr
    after = Project.load(adopted_copy.path).read()
    assert "black" not in after
    assert "src/legacy_pkg/utils.py" not in after["flake8"]  # black fixed those too


def test_emptied_baselines_leave_no_empty_tables_and_files_are_counted_once(
    adopted_copy: Adopted,
):
    """utils.py leaves black's, flake8's and doctest's baselines, usage.md doctest's:
    two files; [tool.black] and [tool.mlsmoke.doctest] held only baselines."""
    git(adopted_copy.path, "rm", "-q", "src/legacy_pkg/utils.py", "docs/usage.md")
    ran = mlsmoke(adopted_copy.path, "debt", "--update")
    assert ran.returncode == 0, ran.stderr
    assert "mlsmoke debt: 2 files left a baseline" in ran.stdout
    text = (adopted_copy.path / "pyproject.toml").read_text()
    assert "[tool.black]" not in text and "[tool.mlsmoke.doctest]" not in text
    assert text.startswith(PYPROJECT) and "\n\n\n" not in text
