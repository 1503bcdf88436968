"""A checkout in a directory named ``mlsmoke`` (what ``git clone .../mlsmoke`` makes):
the tests that keep mlsmoke's frames out of the user's traceback must still pass there,
since every path, the user's included, then holds the word."""

from __future__ import annotations

import os
import subprocess
import sys

from gitrepo import snapshot_checkout

TRACEBACK_TESTS = (
    "tests/overfit/engine_test.py::"
    "test_error_is_recorded_with_its_phase_module_and_user_line"
)


def test_the_traceback_tests_pass_from_a_checkout_named_mlsmoke(tmp_path):
    checkout = tmp_path / "mlsmoke"
    checkout.mkdir()
    snapshot_checkout(checkout)
    env = {**os.environ, "PYTHONPATH": str(checkout / "hooks")}
    env.pop("PYTEST_ADDOPTS", None)
    where = subprocess.run(
        [sys.executable, "-c", "import mlsmoke; print(mlsmoke.__file__)"],
        cwd=checkout, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert where.startswith(str(checkout / "hooks" / "mlsmoke"))
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         TRACEBACK_TESTS],
        cwd=checkout, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "1 passed" in completed.stdout
