"""The torchfix hook through real pre-commit and the manifest, as pre-commit.ci runs
it: its own hook environment (flake8 and TorchFix from ``additional_dependencies``),
no project environment, no worker. TorchFix's codes only, under the project's own
flake8 configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gitrepo import HookRepo, commit_all, init_git_repo
from mlsmoke.hook_repos import HOOK_REPOS
from mlsmoke.torch_lint import job

FLAKE8 = textwrap.dedent("""
    [flake8]
    max-line-length = 88
    extend-select = TOR0,TOR1,TOR2,TOR4
    per-file-ignores =
        legacy.py:TOR102
    """)
LOADS = textwrap.dedent("""
    import os

    import torch


    def load(path):
        return torch.load(path)
    """)


def _config(hook_repo: HookRepo) -> str:
    requirements = [
        f"flake8=={HOOK_REPOS['flake8']['rev']}",
        HOOK_REPOS["flake8"]["torchfix_requirement"],
    ]
    return textwrap.dedent(f"""
        repos:
          - repo: {hook_repo.path}
            rev: {hook_repo.rev}
            hooks:
              - id: torchfix
                additional_dependencies: {requirements!r}
        """).replace("'", '"')


@pytest.fixture
def project(tmp_path: Path, hook_repo: HookRepo) -> Path:
    root = init_git_repo(tmp_path / "project")
    (root / ".pre-commit-config.yaml").write_text(_config(hook_repo))
    (root / ".flake8").write_text(FLAKE8)
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n')
    return root


def test_torch_load_without_weights_only_is_blocked_with_tor102_only(
    project: Path, run_pre_commit
):
    (project / "model.py").write_text(LOADS)
    (project / "legacy.py").write_text(LOADS)  # per-file-ignores: TOR102
    (project / "silenced.py").write_text(
        LOADS.replace("load(path)\n", "load(path)  # noqa: TOR102\n")
    )
    commit_all(project, "start")
    ran = run_pre_commit(project, "run", "--all-files")
    output = ran.stdout + ran.stderr
    assert ran.returncode == 1, output
    assert "model.py:8:" in output and "TOR102 `torch.load` without" in output
    assert "legacy.py" not in output and "silenced.py" not in output
    assert "F401" not in output  # `import os` unused: the flake8 hook's to report


def test_files_without_torch_pass_unread(project: Path, run_pre_commit):
    (project / "tool.py").write_text("import os\n")  # F401, not TorchFix's
    commit_all(project, "start")
    ran = run_pre_commit(project, "run", "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_job_with_another_flake8_or_torchfix_leaves_it_to_the_hook(capsys):
    other = '{"flake8": "0.0.1", "torchfix": "0.0.1"}'
    read, write = os.pipe()
    assert job.main([other, "model.py", str(write)]) == job.UNAVAILABLE
    assert capsys.readouterr().out == ""
    with os.fdopen(read) as versions:  # what it has, for a run ahead to record
        assert json.loads(versions.read()) == job.installed_versions()


def test_the_report_keeps_torchfix_codes_only():
    report = [
        "F401\tm.py:1:1: F401 'os' imported but unused\n",
        "TOR102\tm.py:8:12: TOR102 `torch.load` without `weights_only`\n",
        "    return torch.load(path)\n",  # --show-source: not a finding
    ]
    assert job.torchfix_lines(report) == [
        "m.py:8:12: TOR102 `torch.load` without `weights_only`"
    ]


def test_a_bad_worker_table_fails_the_commit_that_edits_it(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.mlsmoke.worker]\nidle = -1\n")
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "torchfix", "pyproject.toml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "tool.mlsmoke.worker.idle" in ran.stderr
