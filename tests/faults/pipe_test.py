"""A closed stdout (``mlsmoke ... | head -1``) ends every subcommand quietly with 141,
and a --json path that cannot be written is refused before any gate runs."""

from __future__ import annotations

import os
import sys

import pytest

from .faultkit import assert_clean

FAILING_EXAMPLE = '"""\n>>> 1 + 1\n3\n"""\n'
UNSAFE_SCRIPT = "#!/bin/bash\necho hi\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["doctest", "example.py"],
        ["strict-mode", "script.sh"],
        ["overfit", "--no-cache"],
    ],
    ids=["help", "doctest", "strict-mode", "overfit"],
)
def test_a_closed_stdout_exits_141_quietly(fault_project, mlsmoke, monkeypatch, args):
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    root = fault_project(timeout=5)
    (root / "example.py").write_text(FAILING_EXAMPLE)
    (root / "script.sh").write_text(UNSAFE_SCRIPT)
    outcome = mlsmoke(*args, close_stdout=True)
    assert outcome.code == 141, outcome.output
    assert outcome.stderr == ""
    assert_clean(outcome)


# Root writes through file modes: a read-only file system is unwritable for all.
READ_ONLY = "/sys/out.json" if os.geteuid() == 0 else "readonly/out.json"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("missing/out.json", "no such directory: missing"),
        (READ_ONLY, "cannot write: Permission denied"),
        (".", "is a directory, not a file"),
    ],
    ids=["missing-directory", "read-only", "directory"],
)
def test_an_unwritable_json_path_exits_2_before_the_gate(
    fault_project, mlsmoke, path, says
):
    root = fault_project(model="fault_factories:hung_model", timeout=60)
    (root / "readonly").mkdir()
    (root / "readonly").chmod(0o500)
    outcome = mlsmoke("overfit", "--json", path)
    assert outcome.code == 2, outcome.output
    assert outcome.stderr == f"mlsmoke overfit: --json {path}: {says}\n"
    assert outcome.seconds < 5.0  # the hung gate never started
    assert not (root / "readonly" / "out.json").exists()
    assert_clean(outcome)
