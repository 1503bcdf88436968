"""One worker per project and interpreter, whoever starts it: the CLI, a caller
with pre-commit's variables and PATH, and a real ``pre-commit run``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import mlsmoke

from .ahead_test import _config, _pre_commit
from .warmkit import WarmProject, wait_until


def _hook_environment(project: WarmProject) -> dict[str, str]:
    """What pre-commit and git change for a hook: their variables, a hook
    environment's bin first on PATH, git's exec-path."""
    hook_bin = project.root.parent / "hook-env" / "bin"
    return {
        "PRE_COMMIT": "1",
        "PRE_COMMIT_ORIGIN": "HEAD",
        "GIT_INDEX_FILE": str(project.root / ".git" / "index"),
        "VIRTUAL_ENV": str(hook_bin.parent),
        "PATH": f"{hook_bin}:/usr/lib/git-core:{os.environ.get('PATH', '')}",
    }


def test_callers_with_different_environments_share_one_worker(project: WarmProject):
    assert project.overfit().code == 0
    (worker,) = project.warm_pids()
    assert project.overfit(env=_hook_environment(project)).code == 0
    assert project.doctest(env={"TERM": "dumb", "COLUMNS": "40"}).code == 0
    assert project.warm_pids() == [worker]
    assert {entry["ppid"] for entry in project.seen()} == {worker}


def test_pre_commit_and_the_cli_share_one_worker(project: WarmProject):
    run = _pre_commit(project, _config())
    assert run.returncode == 0, run.stdout + run.stderr
    (worker,) = project.warm_pids()
    assert project.overfit().code == 0
    assert project.warm_pids() == [worker]
    assert {entry["ppid"] for entry in project.seen()} == {worker}


def test_status_states_memory_and_lists_this_users_workers(project: WarmProject):
    assert project.overfit().code == 0
    (worker,) = project.warm_pids()
    status = project.worker("status")
    assert f"worker {worker}: {project.root}" in status
    memory = re.search(r"memory (\d+) MB resident", status)
    assert memory and int(memory.group(1)) > 50, status  # torch is imported
    assert status.count("\nworker ") == 1


def test_status_leaves_out_a_worker_of_another_user(project: WarmProject):
    from mlsmoke import worker_command as command

    assert project.overfit().code == 0
    directory = project.workers
    answers = command._workers(directory)
    assert len(answers) == 1
    real_uid = os.getuid
    try:
        os.getuid = lambda: real_uid() + 1  # type: ignore[assignment]
        assert command._workers(directory) == []
    finally:
        os.getuid = real_uid  # type: ignore[assignment]
    assert sorted(directory.glob("*.sock"))  # another's socket is left alone
    assert sys.platform.startswith("linux")


def _hook_env(project: WarmProject, name: str, edit: str = "") -> Path:
    """An interpreter whose mlsmoke is a copy of this one in a directory of its own,
    as pre-commit's hook environment has; ``edit`` appended to its warm/jobs.py."""
    copy = project.root.parent / name / "hooks"
    shutil.copytree(
        Path(mlsmoke.__file__).parent,
        copy / "mlsmoke",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    if edit:
        with open(copy / "mlsmoke" / "warm" / "jobs.py", "a") as jobs:
            jobs.write(edit)
    venv = project.root.parent / name / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    (
        Path(sysconfig.get_paths(vars={"base": str(venv)})["purelib"]) / "m.pth"
    ).write_text(f"{copy}\n")
    return venv / "bin" / "python"


def _overfit_from(project: WarmProject, python: Path) -> int:
    environ = {**os.environ, **project.env, "MLSMOKE_FAULT_TAG": project.tag}
    environ.pop("PYTHONPATH", None)
    code = "import sys; from mlsmoke.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [str(python), "-c", code, "overfit", "--no-cache"],
        cwd=project.root,
        env=environ,
        capture_output=True,
        timeout=120,
    ).returncode


def test_the_same_code_elsewhere_shares_and_other_code_replaces(project: WarmProject):
    same = _hook_env(project, "same")
    other = _hook_env(project, "other", "\n# another mlsmoke\n")
    assert _overfit_from(project, same) == 0
    (worker,) = project.warm_pids()
    assert project.overfit().code == 0  # the project's mlsmoke, the same code
    assert project.warm_pids() == [worker]
    assert _overfit_from(project, other) == 0
    assert wait_until(lambda: len(project.warm_pids()) == 1)
    (replaced,) = project.warm_pids()
    assert replaced != worker
