"""The project's code runs in a process that looks like ``python -c 'import mod'``:
mlsmoke's own arguments, modules and paths stay out of its sight."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mlsmoke.cli import main as cli_main

HERE = Path(__file__).parent

# What a module sees of its process at import, written where the test can read it.
SNAPSHOT = """
import json, os, sys
SEEN = {
    "argv": list(sys.argv),
    "main_file": getattr(sys.modules["__main__"], "__file__", None),
    "main_spec": repr(getattr(sys.modules["__main__"], "__spec__", None)),
    "cwd": os.getcwd(),
    "path": list(sys.path),
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "seen.json"),
          "w") as file:
    json.dump(SEEN, file)
"""

# A factory module that parses the command line at import, as training scripts do.
PARSES_ARGS = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.005)
ARGS = parser.parse_args()
"""

# nanoGPT's configurator: every argument is a config file to exec, or --key=value.
CONFIGURATOR = """
import sys
for arg in sys.argv[1:]:
    if "=" not in arg:
        exec(open(arg).read())
"""


def _python_c_snapshot(root: Path) -> dict:
    subprocess.run([sys.executable, "-c", "import snapshot"], cwd=root, check=True)
    return json.loads((root / "seen.json").read_text())


def _gate_project(root: Path) -> Path:
    root.mkdir()
    shutil.copy(HERE / "overfit_models.py", root)
    (root / "snapshot.py").write_text(SNAPSHOT)
    (root / "parses_args.py").write_text(PARSES_ARGS)
    (root / "configurator.py").write_text(CONFIGURATOR)
    (root / "factories.py").write_text(
        "import snapshot, parses_args, configurator\n"
        "from overfit_models import MLP, mlp_batch, mlp_loss\n"
    )
    (root / "pyproject.toml").write_text(textwrap.dedent("""
            [tool.mlsmoke.overfit]
            model = "factories:MLP"
            batch = "factories:mlp_batch"
            loss = "factories:mlp_loss"
            """))
    return root


def _assert_like_python_c(seen: dict, expected: dict, root: Path) -> None:
    assert seen["argv"] == expected["argv"] == ["-c"]
    assert seen["main_file"] is None and seen["main_spec"] == "None"
    assert Path(seen["cwd"]).resolve() == root.resolve()
    # Beyond what `python -c` has, only the project's own roots (the "" entry, as an
    # absolute path); mlsmoke's package and temporary files are not among them.
    roots = {str(root), str(root.resolve()), str(root / "src")}
    assert set(seen["path"]) - set(expected["path"]) <= roots


@pytest.fixture(params=["own process", "forked by the warm worker"])
def worker(request, tmp_path, monkeypatch, capsys) -> Iterator[None]:
    """Each test twice: the hook's own process, and a job of the warm worker."""
    if request.param == "own process":
        yield
        return
    monkeypatch.setenv("MLSMOKE_WORKER", "1")
    monkeypatch.setenv("MLSMOKE_WORKER_DIR", str(tmp_path / "workers"))
    yield
    capsys.readouterr()
    assert cli_main(["worker", "stop"]) == 0
    assert "stopped worker" in capsys.readouterr().out  # the job was the worker's


def test_the_gate_s_project_code_sees_a_python_c_process(tmp_path, monkeypatch, worker):
    root = _gate_project(tmp_path / "project")
    expected = _python_c_snapshot(root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    assert cli_main(["overfit", "--no-cache"]) == 0
    _assert_like_python_c(json.loads((root / "seen.json").read_text()), expected, root)


def test_the_doctest_runner_s_project_code_sees_a_python_c_process(
    tmp_path, monkeypatch, worker
):
    root = tmp_path / "project"
    root.mkdir()
    (root / "snapshot.py").write_text(SNAPSHOT)
    (root / "parses_args.py").write_text(PARSES_ARGS)
    (root / "configurator.py").write_text(CONFIGURATOR)
    (root / "documented.py").write_text(textwrap.dedent('''
            """
            >>> import snapshot, parses_args, configurator
            >>> parses_args.ARGS.lr
            0.005
            >>> import torch  # the worker runs only examples that need torch
            """
            '''))
    expected = _python_c_snapshot(root)
    (root / "seen.json").unlink()
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    assert cli_main(["doctest", "documented.py"]) == 0
    _assert_like_python_c(json.loads((root / "seen.json").read_text()), expected, root)
