"""The basics hook through real pre-commit: the same effect as pre-commit-hooks' own
hooks, file for file and line for line, in one interpreter."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from gitrepo import HookRepo, git, init_git_repo
from mlsmoke.hook_repos import HOOK_REPOS
from mlsmoke.adopt.upstream_basics import upstream_repo
from mlsmoke.offline_hooks import local_hooks, pypi_version

ROOT = Path(__file__).resolve().parents[2]
CHECK_IDS = [
    "check-yaml",
    "check-toml",
    "end-of-file-fixer",
    "trailing-whitespace",
    "check-merge-conflict",
    "check-added-large-files",
    "detect-private-key",
    "debug-statements",
]
# A file for each check to find, and files none may touch.
FILES: dict[str, bytes] = {
    "notes.md": b"text with a trailing space \nno final newline",
    "crlf.txt": b"windows line \r\nend\r\n",
    "bad.yaml": b"key: [\n",
    "bad.toml": b"key = \n",
    "debug.py": b"import pdb\n\npdb.set_trace()\n",
    "conflict.txt": b"<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n",
    "id_rsa": b"-----BEGIN RSA PRIVATE KEY-----\nabc\n",
    "big.bin": b"\x00\x01 \n" * 2000,
    "image.png": b"\x89PNG\r\n\x1a\n  \x00\x00 \n",
    "clean.md": b"# fine\n",
}
MERGE = "--assume-in-merge"
MAXKB = "--maxkb=4"  # the configs are smaller
_HEADER = re.compile(r"^(\S.*?)\.{3,}.*(Passed|Failed|Skipped)$")


def _project(path: Path, config: dict) -> Path:
    init_git_repo(path)
    for name, data in FILES.items():
        (path / name).write_bytes(data)
    (path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(path, "add", "--all")  # added, not committed: check-added-large-files sees them
    return path


def _upstream_config() -> dict:
    args = {"check-merge-conflict": [MERGE], "check-added-large-files": [MAXKB]}
    repo = upstream_repo()
    for hook in repo["hooks"]:
        if hook["id"] in args:
            hook["args"] = args[hook["id"]]
    return {"repos": [local_hooks(repo)]}


def _basics_config(hook_repo: HookRepo, **hook: object) -> dict:
    basics = {
        "id": "basics",
        "args": [
            f"--args=check-merge-conflict={MERGE}",
            f"--args=check-added-large-files={MAXKB}",
        ],
        **hook,
    }
    return {
        "repos": [
            {"repo": str(hook_repo.path), "rev": hook_repo.rev, "hooks": [basics]}
        ]
    }


def _lines_by_check(output: str, combined: bool) -> dict[str, list[str]]:
    """Each check's output lines; the combined hook's start with its check's id."""
    found: dict[str, list[str]] = defaultdict(list)
    section = None
    for line in output.splitlines():
        header = _HEADER.match(line)
        if header:
            section = header.group(1).strip()
            continue
        if section is None or not line.strip() or line.startswith("- "):
            continue
        if combined:
            check, _, rest = line.partition(": ")
            found[check].append(rest)
        else:
            found[section].append(line)
    return {check: sorted(lines) for check, lines in found.items()}


def test_one_interpreter_does_what_the_eight_hooks_do(
    tmp_path: Path, hook_repo: HookRepo, run_pre_commit
) -> None:
    upstream = _project(tmp_path / "upstream", _upstream_config())
    basics = _project(tmp_path / "basics", _basics_config(hook_repo))
    ran = {
        path: run_pre_commit(path, "run", "--all-files") for path in (upstream, basics)
    }

    for path, result in ran.items():
        assert result.returncode == 1, result.stdout + result.stderr
    for name in FILES:  # fixed alike, byte for byte; binaries untouched
        assert (basics / name).read_bytes() == (upstream / name).read_bytes(), name
    assert (
        basics / "notes.md"
    ).read_bytes() == b"text with a trailing space\nno final newline\n"
    assert (basics / "image.png").read_bytes() == FILES["image.png"]
    assert (basics / "crlf.txt").read_bytes() == b"windows line\r\nend\r\n"
    said = _lines_by_check(ran[basics].stdout, combined=True)
    assert said == _lines_by_check(ran[upstream].stdout, combined=False)
    assert set(said) == set(CHECK_IDS)  # each check found its file


def test_a_check_named_in_skip_is_skipped(
    tmp_path: Path, hook_repo: HookRepo, run_pre_commit
) -> None:
    project = _project(tmp_path / "p", _basics_config(hook_repo))
    ran = run_pre_commit(
        project, "run", "--all-files", env={"SKIP": "trailing-whitespace,check-yaml"}
    )
    assert ran.returncode == 1
    assert (project / "notes.md").read_bytes() == FILES["notes.md"] + b"\n"
    checks = _lines_by_check(ran.stdout, combined=True)
    assert "trailing-whitespace" not in checks and "check-yaml" not in checks
    assert "end-of-file-fixer" in checks


def test_without_pre_commit_hooks_it_says_what_to_install(
    tmp_path: Path, hook_repo: HookRepo, run_pre_commit
) -> None:
    config = _basics_config(hook_repo, additional_dependencies=[])
    project = _project(tmp_path / "p", config)
    ran = run_pre_commit(project, "run", "--all-files")
    assert ran.returncode == 1  # pre-commit's code for a failed hook
    assert "exit code: 2" in ran.stdout
    assert "identify is not installed where the hook runs" in ran.stdout
    assert "additional_dependencies" in ran.stdout
    assert "Traceback" not in ran.stdout + ran.stderr
    assert (project / "notes.md").read_bytes() == FILES["notes.md"]


def test_the_manifest_pins_the_pre_commit_hooks_the_template_names() -> None:
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (basics,) = [hook for hook in manifest if hook["id"] == "basics"]
    rev = pypi_version(HOOK_REPOS["pre_commit_hooks"]["rev"])
    assert f"pre-commit-hooks=={rev}" in basics["additional_dependencies"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--checks", "check-yaml,nope", "a.md"],
            "--checks: no check nope; the checks are check-yaml",
        ),
        (["--args", "nope=--x", "a.md"], "--args nope=--x: give ID=ARGS"),
        (["--args", "check-yaml", "a.md"], "--args check-yaml: give ID=ARGS"),
        (
            ["--args", "check-yaml='", "a.md"],
            "--args check-yaml=': No closing quotation",
        ),
        (["a.md", "gone.md"], "gone.md: no such file"),
        (["--checks=check-yaml", "--checks=nope", "a.md"], "--checks: no check nope"),
    ],
)
def test_bad_arguments_are_named(
    argv: list[str], message: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    from mlsmoke.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.md").write_bytes(b"a  \n")
    assert main(["basics", *argv]) == 2
    assert f"mlsmoke basics: {message}" in capsys.readouterr().err
    assert (tmp_path / "a.md").read_bytes() == b"a  \n"


def test_checks_given_one_by_one_run_those_only(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from mlsmoke.cli import main

    monkeypatch.chdir(tmp_path)
    init_git_repo(tmp_path)
    (tmp_path / "a.md").write_bytes(b"a  \nb")
    argv = ["--checks=end-of-file-fixer", "--checks=check-yaml", "a.md"]
    assert main(["basics", *argv]) == 1
    assert capsys.readouterr().out == "end-of-file-fixer: Fixing a.md\n"
    assert (tmp_path / "a.md").read_bytes() == b"a  \nb\n"  # whitespace kept


def test_arguments_a_check_refuses_are_a_usage_error(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from mlsmoke.cli import main

    monkeypatch.chdir(init_git_repo(tmp_path))
    (tmp_path / "a.yaml").write_bytes(b"a: 1\n")
    assert main(["basics", "--args=check-yaml=--bogus", "a.yaml"]) == 2
    assert "error: unrecognized arguments: --bogus" in (capsys.readouterr().out)


def test_outside_a_git_repository_the_checks_that_need_one_say_so(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from mlsmoke.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.md").write_bytes(b"a  \n")
    assert main(["basics", "a.md"]) == 2
    said = capsys.readouterr()
    assert "check-merge-conflict: could not run: CalledProcessError:" in said.out
    assert "not a git repository" in said.out and "Traceback" not in said.err
    assert (tmp_path / "a.md").read_bytes() == b"a\n"  # the other checks ran
