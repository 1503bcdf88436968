"""``mlsmoke overfit`` end to end below pre-commit: the worker in the project's
interpreter, the cache, --json, and the exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlsmoke.cli import main as cli_main
from mlsmoke.errors import EnvironmentProblem
from mlsmoke.overfit.process import spawn
from mlsmoke.overfit.process.main import main
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.process.run_gates import run_worker

HERE = Path(__file__).parent
TWO_GATES = """
[tool.mlsmoke.overfit]
watch = ["**/*.py"]
[tool.mlsmoke.overfit.mlp]
model = "overfit_models:MLP"
batch = "overfit_models:mlp_batch"
loss = "overfit_models:mlp_loss"
[tool.mlsmoke.overfit.slow]
model = "overfit_models:MLP"
batch = "overfit_models:mlp_batch"
loss = "overfit_models:mlp_loss"
lr = 1e-7
max-steps = 3
"""


def make_project(root: Path, pyproject: str) -> Path:
    root.mkdir(exist_ok=True)
    shutil.copy(HERE / "overfit_models.py", root)
    (root / "pyproject.toml").write_text(pyproject)
    return root


def fake_python(path: Path, worker: str, real: str = sys.executable) -> Path:
    """An interpreter that answers mlsmoke's probe with ``real`` and runs the shell
    code ``worker`` when started as the gate's worker."""
    path.write_text(
        "#!/bin/sh\n"
        'case "$*" in *mlsmoke.overfit.process.worker*) ;;'
        ' *) exec "$REAL" "$@" ;; esac\n'
        f"{worker}\n".replace("$REAL", real)
    )
    path.chmod(0o755)
    return path


def spy_python(directory: Path) -> tuple[Path, Path]:
    """An interpreter that logs each start of the worker, then runs it."""
    log = directory / "starts.log"
    worker = f'echo started >> "{log}"\nexec "{sys.executable}" "$@"'
    return fake_python(directory / "spy-python", worker), log


def configure_worker(root: Path, name: str, shell: str) -> None:
    """Make ``root``'s configured interpreter one whose worker runs ``shell``."""
    python = fake_python(root.parent / name, shell)
    (root / "pyproject.toml").write_text(
        f'[tool.mlsmoke]\npython = "{python}"\n' + TWO_GATES
    )


def starts(log: Path) -> int:
    """How many times the worker started."""
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = make_project(tmp_path / "project", TWO_GATES)
    spy, log = spy_python(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", str(spy))
    return root, log


def test_passes_are_cached_failures_rerun_and_watched_files_invalidate(project, capsys):
    root, log = project
    assert main(["--json", "out.json"]) == 1
    results = json.loads((root / "out.json").read_text())
    assert [(r["gate"], r["verdict"], r["cached"]) for r in results] == [
        ("mlp", "pass", False), ("slow", "fail", False)]  # fmt: skip
    assert set(results[0]) == set(
        "gate verdict diagnosis warnings device steps initial_loss final_loss"
        " target losses rank_losses seconds cached tier sources recipe notes".split()
    )
    assert results[0]["diagnosis"]["code"] == "memorized"
    assert results[1]["steps"] == 3 and len(results[1]["losses"]) == 4
    out = capsys.readouterr().out
    assert "overfit mlp: PASS memorized" in out and "overfit slow: FAIL" in out
    assert starts(log) == 1 and (root / ".mlsmoke" / ".gitignore").is_file()

    assert main(["--gate", "mlp"]) == 0  # cached: no interpreter started
    assert starts(log) == 1 and "PASS memorized (cached)" in capsys.readouterr().out
    assert main(["--gate", "slow"]) == 1 and starts(log) == 2  # failures rerun

    (root / "README.md").write_text("not watched\n")
    assert main(["--gate", "mlp"]) == 0 and starts(log) == 2
    with (root / "overfit_models.py").open("a") as file:
        file.write("\n# a change to a watched file\n")
    assert main(["--gate", "mlp"]) == 0 and starts(log) == 3
    assert main(["--gate", "mlp", "--no-cache"]) == 0 and starts(log) == 4
    capsys.readouterr()
    assert main(["--gate", "mlp", "--tier", "pr"]) == 0 and starts(log) == 5
    headline = "overfit mlp: PASS memorized at tier pr · Adam lr 0.005 (built-in)\n"
    assert headline in capsys.readouterr().out
    assert main(["--gate", "mlp", "--tier", "pr"]) == 0 and starts(log) == 5
    assert "PASS memorized at tier pr (cached)" in capsys.readouterr().out


def test_a_cached_pass_does_not_import_torch(project):
    root, log = project
    assert main(["--gate", "mlp"]) == 0
    code = (
        "import sys; from mlsmoke.overfit.process.main import main;"
        " r = main(['--gate', 'mlp'])"
    )
    code += "; assert 'torch' not in sys.modules, 'torch imported'; sys.exit(r)"
    completed = subprocess.run([sys.executable, "-c", code], cwd=root, text=True,
                               capture_output=True)  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert "(cached)" in completed.stdout and starts(log) == 1


def test_configuration_errors_exit_2_with_the_key(tmp_path, monkeypatch, capsys):
    make_project(tmp_path, '[tool.mlsmoke.overfit]\nbatch = "a:b"\n')
    monkeypatch.chdir(tmp_path)
    assert cli_main(["overfit"]) == 2
    assert capsys.readouterr().err == (
        "mlsmoke overfit: tool.mlsmoke.overfit.model: missing; set it to"
        ' "package.module:callable"\n'
    )
    assert cli_main(["overfit", "--device", "tpu"]) == 2
    assert "--device: expected" in capsys.readouterr().err


def test_a_config_error_found_in_the_worker_exits_2(project, capsys):
    root, _ = project
    (root / "pyproject.toml").write_text(TWO_GATES.replace("mlp_batch", "no_batch", 1))
    assert main(["--gate", "mlp"]) == 2
    out = capsys.readouterr().out
    assert "tool.mlsmoke.overfit.mlp.batch: module 'overfit_models' has no" in out


def test_no_interpreter_with_torch_exits_2_saying_how_to_fix_it(
    tmp_path, monkeypatch, capsys
):
    make_project(tmp_path, TWO_GATES)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(shutil.which("python3", path="/usr/bin:/bin"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLSMOKE_PYTHON", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert cli_main(["overfit"]) == 2
    err = capsys.readouterr().err
    assert "can import torch" in err and "ci: skip" in err and "MLSMOKE_PYTHON" in err


def test_a_worker_that_dies_fails_the_gate_with_its_output(project, capsys):
    root, _ = project
    configure_worker(root, "dying-python", "echo 'Segmentation fault' >&2\nexit 139")
    assert main(["--gate", "mlp"]) == 1
    out = capsys.readouterr().out
    assert "exited with code 139 before the gate finished" in out
    assert "Segmentation fault" in out


def test_ctrl_c_in_the_worker_exits_130(project, capsys):
    root, _ = project
    configure_worker(root, "interrupted-python", "exit 130")
    assert cli_main(["overfit", "--gate", "mlp"]) == 130
    assert capsys.readouterr().err == "mlsmoke overfit: interrupted\n"


def test_an_interpreter_that_cannot_start_is_an_environment_problem(tmp_path):
    gates = [GateSettings("mlp", "overfit_models:MLP", "overfit_models:mlp_batch")]
    with pytest.raises(EnvironmentProblem, match="cannot run: No such file"):
        run_worker(tmp_path, tmp_path / "gone" / "python", gates, None, False)


def test_a_worker_that_never_starts_a_gate_is_killed_at_the_startup_limit(
    project, monkeypatch, capsys
):
    monkeypatch.setattr(spawn, "STARTUP_LIMIT", 0.5)
    root, _ = project
    configure_worker(root, "hanging-python", "exec sleep 60")
    assert main(["--gate", "mlp"]) == 1
    out = capsys.readouterr().out
    assert "overfit mlp: FAIL timeout" in out
    assert "the worker had not started the gate after 0.5 s" in out


def test_a_worker_killed_by_a_signal_says_so(project, capsys):
    root, _ = project
    configure_worker(root, "killed-python", "kill -KILL $$")
    assert main(["--gate", "mlp"]) == 1
    out = capsys.readouterr().out
    assert "was killed by SIGKILL before the gate finished" in out
    assert "out-of-memory killer" in out
