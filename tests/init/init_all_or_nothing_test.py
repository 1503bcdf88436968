"""``mlsmoke init`` writes its files all or nothing: a file it cannot write stops it
before the first write, a write that fails anyway puts back what was written, and a
rerun then baselines every tool (one existing baseline does not mean all exist)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from adoption import PROJECT_ENV, Adopted, mlsmoke
from legacy_repo import write_legacy_repo

from gitrepo import commit_all, git, init_git_repo
from mlsmoke import cli
from mlsmoke.adopt import textfile
from mlsmoke.adopt.baselines import STRICT_MODE, Project

ADOPTED_FILES = (".pre-commit-config.yaml", "setup.cfg", "pyproject.toml")


def legacy(tmp_path: Path) -> Path:
    repo = write_legacy_repo(init_git_repo(tmp_path / "repo"))
    commit_all(repo, "legacy")
    return repo


def fail_writing(name: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the atomic write of ``name`` fail after its checks passed; returns the
    names written, in order."""
    written = []
    real = textfile.write_atomically

    def write(path, data, mode):
        written.append(Path(path).name)
        if Path(path).name == name:
            raise OSError(28, "No space left on device")
        real(path, data, mode)

    monkeypatch.setattr(textfile, "write_atomically", write)
    return written


def test_a_failed_write_puts_back_the_files_written_before_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    repo = legacy(tmp_path)
    (repo / "setup.cfg").write_bytes(b"[flake8]\r\nmax-line-length = 88\n")  # mixed
    os.chmod(repo / "setup.cfg", 0o640)
    commit_all(repo, "mixed line endings")
    before = {name: (repo / name).read_bytes() for name in ADOPTED_FILES}
    for key, value in PROJECT_ENV.items():
        monkeypatch.setenv(key, value)
    written = fail_writing("pyproject.toml", monkeypatch)
    assert cli.main(["init", str(repo)]) == 2
    error = capsys.readouterr().err
    assert "pyproject.toml: cannot write: No space left on device" in error
    assert "nothing was changed" in error and "Traceback" not in error
    assert written[:3] == list(ADOPTED_FILES)  # then the two put back
    assert {name: (repo / name).read_bytes() for name in ADOPTED_FILES} == before
    assert os.stat(repo / "setup.cfg").st_mode & 0o777 == 0o640
    assert git(repo, "status", "--porcelain", "--ignored") == ""

    monkeypatch.undo()
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 0, ran.stderr
    assert "wrote: .pre-commit-config.yaml, setup.cfg, pyproject.toml" in ran.stdout
    assert STRICT_MODE in Project.load(repo).read()


def test_a_file_init_created_is_removed_when_a_later_write_fails(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    repo = legacy(tmp_path)
    git(repo, "rm", "-q", ".pre-commit-config.yaml")
    commit_all(repo, "no pre-commit yet")
    for key, value in PROJECT_ENV.items():
        monkeypatch.setenv(key, value)
    fail_writing("setup.cfg", monkeypatch)
    assert cli.main(["init", str(repo)]) == 2
    assert "setup.cfg: cannot write" in capsys.readouterr().err
    assert not (repo / ".pre-commit-config.yaml").exists()
    assert git(repo, "status", "--porcelain", "--ignored") == ""


def _immutable(path: Path) -> bool:
    if shutil.which("chattr") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["chattr", "+i", str(path)]).returncode == 0


def test_an_unwritable_file_stops_init_before_the_first_write(tmp_path: Path):
    repo = legacy(tmp_path)
    pyproject = repo / "pyproject.toml"
    if not _immutable(pyproject):
        pytest.skip("needs root and a file system with chattr +i")
    try:
        ran = mlsmoke(repo, "init")
    finally:
        subprocess.run(["chattr", "-i", str(pyproject)], check=True)
    assert ran.returncode == 2
    assert "pyproject.toml: cannot write: Operation not permitted; nothing was " in (
        ran.stderr
    )
    assert git(repo, "status", "--porcelain", "--ignored") == ""


def test_init_baselines_a_tool_whose_baseline_is_missing(adopted_copy: Adopted):
    """One baseline left out (a new hook, or one removed by hand) is measured again;
    the others are kept as they are."""
    project = Project.load(adopted_copy.path)
    held = project.read()
    project.write(STRICT_MODE, {})
    textfile.write_text(project.pyproject)
    commit_all(adopted_copy.path, "strict-mode baseline gone")
    ran = mlsmoke(adopted_copy.path, "init")
    assert ran.returncode == 0, ran.stderr
    assert "wrote: pyproject.toml" in ran.stdout
    assert "baselines exist: kept" in ran.stdout
    assert Project.load(adopted_copy.path).read() == held
