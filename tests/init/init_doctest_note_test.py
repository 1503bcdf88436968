"""init's doctest note, through the CLI: it names the interpreters it tried and what
each lacked, and a ``# >>>`` comment is not an example."""

from __future__ import annotations

import os
import subprocess
import sys

from gitrepo import commit_all, init_git_repo

NEEDS_A_MISSING_MODULE = '''\
"""Adds.

>>> add(1, 2)
3
"""
import tinydep_not_installed


def add(a, b):
    return a + b
'''
ONLY_A_COMMENT = "# >>> this is a comment, not an example\nVALUE = 1\n"


def test_the_note_names_the_venv_it_tried_and_skips_comment_prompts(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (repo / "ex.py").write_text(NEEDS_A_MISSING_MODULE)
    (repo / "comment.py").write_text(ONLY_A_COMMENT)
    (repo / ".gitignore").write_text(".venv/\n")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")],
        check=True,
    )
    init_git_repo(repo)
    commit_all(repo, "start")
    env = {k: v for k, v in os.environ.items() if k != "MLSMOKE_PYTHON"}
    env["PATH"] = "/usr/bin:/bin"
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "init", "--no-gate"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = ran.stdout
    assert "doctest: the examples could not run" in out
    assert (
        "(.venv/ in the project root): cannot import tinydep_not_installed"
        " (needed by ex.py)" in out
    )
    assert "create .venv" not in out
    assert "Install what it lacks into .venv" in out
    doctest_line = next(line for line in out.splitlines() if "doctest  " in line)
    assert "1 file of 2" in doctest_line  # of the 2 Python files, ex.py only
    assert "comment.py" not in out.split("Baselines")[1]  # its `# >>>` is no example
