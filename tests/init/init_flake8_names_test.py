"""flake8's baseline names files as flake8 reads them: a name with a space, a comma or
a glob character is still excluded (by real flake8), and a file at the root is that
file only, not every file of the same name. black's baseline holds such names too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from adoption import mlsmoke
from legacy_repo import write_legacy_repo

from gitrepo import commit_all, init_git_repo
from mlsmoke.adopt import flake8_config

AWKWARD = [
    "src/legacy_pkg/a+b c.py",
    "src/legacy_pkg/x,y:z.py",
    "src/legacy_pkg/[v]*.py",
]


def flake8(repo: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", *files],
        cwd=repo,
        capture_output=True,
        text=True,
    )


def test_awkward_names_are_baselined_for_real_flake8_and_leave_when_fixed(tmp_path):
    repo = write_legacy_repo(init_git_repo(tmp_path / "repo"))
    for name in [*AWKWARD, "tool.py"]:
        (repo / name).write_text("import os\nx=1\n")
    commit_all(repo, "legacy")
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 0, ran.stderr
    for name in AWKWARD:
        assert f"{name}  E225,F401" in ran.stdout
    checked = flake8(repo, *AWKWARD, "tool.py")
    assert checked.returncode == 0, checked.stdout
    black = [sys.executable, "-m", "black", "--check", *AWKWARD, "tool.py"]
    formatted = subprocess.run(black, cwd=repo, capture_output=True, text=True)
    assert formatted.returncode == 0, formatted.stderr  # black's baseline too
    assert mlsmoke(repo, "debt").stdout.count("E225,F401") == len(AWKWARD) + 1

    (repo / "src/legacy_pkg/tool.py").write_text("import os\n")  # same name, new
    checked = flake8(repo, "src/legacy_pkg/tool.py")
    assert "src/legacy_pkg/tool.py:1:1: F401" in checked.stdout

    (repo / AWKWARD[0]).write_text("x = 1\n")
    updated = mlsmoke(repo, "debt", "--update")
    assert updated.returncode == 0, updated.stderr
    assert "1 file left a baseline" in updated.stdout  # flake8's and black's
    assert AWKWARD[0] not in updated.stdout and AWKWARD[1] in updated.stdout
    assert flake8(repo, *AWKWARD[1:], "tool.py").returncode == 0


@pytest.mark.parametrize(
    "path, pattern",
    [
        ("src/a.py", "src/a.py"),
        ("a.py", "./a.py"),
        ("src/a b.py", "src/a?b.py"),
        ("src/x,y:z\t.py", "src/x?y?z?.py"),
        ("src/[v]*?.py", "src/[[]v][*][?].py"),
        ("#a.py", "./#a.py"),
    ],
)
def test_patterns_round_trip(path: str, pattern: str, tmp_path: Path):
    assert flake8_config.to_pattern(path) == pattern
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text("")
    assert flake8_config.from_pattern(pattern, tmp_path) == path
