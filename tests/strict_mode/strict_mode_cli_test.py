"""``mlsmoke strict-mode`` as users run it: output, exit codes, --fix on disk, skips and
bad input."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mlsmoke import cli
from mlsmoke.strict_mode import files
from mlsmoke.strict_mode.checker import Policy
from mlsmoke.strict_mode.main import decide, main

STRICT = b"#!/bin/bash\nset -euo pipefail\npython train.py\n"
LOOSE = b"#!/bin/bash\n# Train.\npython train.py\n"
LOOSE_FIXED = b"#!/bin/bash\n# Train.\nset -euo pipefail\npython train.py\n"


@pytest.fixture(autouse=True)
def in_tmp_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(name: str, data: bytes, mode: int = 0o755) -> Path:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_a_byte_order_mark_is_not_a_column(capsys: pytest.CaptureFixture[str]) -> None:
    write("bom.sh", b"\xef\xbb\xbfecho hi\n")
    assert main(["bom.sh"]) == 1
    assert capsys.readouterr().out.startswith("bom.sh:1:1: SM001 ")


def test_clean_script_passes_silently(capsys: pytest.CaptureFixture[str]) -> None:
    write("strict.sh", STRICT)
    assert main(["strict.sh"]) == 0
    assert capsys.readouterr() == ("", "")


def test_problem_lines_name_path_line_column_and_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("scripts/loose.sh", LOOSE)
    write("late.sh", b"#!/bin/bash\n\n  echo start\nset -euo pipefail\n")
    assert main(["scripts/loose.sh", "late.sh"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "scripts/loose.sh:3:1: SM001 errexit, nounset and pipefail are off when "
        "`python train.py` runs; add `set -euo pipefail` before it",
        "late.sh:4:1: SM002 `set -euo pipefail` comes too late: `echo start` on line 3 "
        "runs before it",
    ]


def test_fix_rewrites_in_place_and_a_second_run_is_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write("loose.sh", LOOSE, mode=0o750)
    assert main(["--fix", "loose.sh"]) == 1
    assert capsys.readouterr().out == "Fixing loose.sh\n"
    assert path.read_bytes() == LOOSE_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert main(["--fix", "loose.sh"]) == 0
    assert path.read_bytes() == LOOSE_FIXED
    assert sorted(os.listdir()) == ["loose.sh", "pyproject.toml"]  # no temporary left


@pytest.mark.parametrize(
    "before, after",
    [
        (
            b"#!/bin/bash\r\n# caf\xe9\r\necho \xff\xfe",
            b"#!/bin/bash\r\n# caf\xe9\r\nset -euo pipefail\r\necho \xff\xfe",
        ),
        (
            "#!/bin/sh\n# café ☃\nset -e\necho ☃\n".encode(),
            "#!/bin/sh\n# café ☃\nset -eu\necho ☃\n".encode(),
        ),
        (
            b"\xef\xbb\xbf#!/bin/bash\necho\n",
            b"\xef\xbb\xbf#!/bin/bash\nset -euo pipefail\necho\n",
        ),
    ],
    ids=["crlf-latin1-no-final-newline", "utf8", "bom"],
)
def test_fix_keeps_every_other_byte(before: bytes, after: bytes) -> None:
    path = write("x.sh", before, mode=0o700)
    assert main(["--fix", "x.sh"]) == 1
    assert path.read_bytes() == after
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_unfixable_script_is_reported_and_left_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("mlsmoke.strict_mode.main.fix", lambda *args: None)
    path = write("loose.sh", LOOSE)
    assert main(["--fix", "loose.sh"]) == 1
    out = capsys.readouterr().out
    assert "loose.sh:3:1: SM001" in out and "cannot fix automatically" in out
    assert path.read_bytes() == LOOSE


@pytest.mark.parametrize(
    "name, data, mode",
    [
        ("lib.sh", b"greet() { echo hi; }\necho loaded\n", 0o644),
        (".bashrc", LOOSE, 0o755),
        ("home/.envrc", LOOSE, 0o755),
        ("dotfiles/zshrc", LOOSE, 0o755),
        ("test/run.bats", b"#!/usr/bin/env bats\n@test x { run true; }\n", 0o755),
        ("tool.sh", b"#!/usr/bin/env python3\nprint(1)\n", 0o755),
    ],
)
def test_skipped_by_default(
    name: str, data: bytes, mode: int, capsys: pytest.CaptureFixture[str]
) -> None:
    write(name, data, mode)
    assert main([name]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["--verbose", name]) == 0
    assert f"{name}: skipped: " in capsys.readouterr().err


def test_symlink_is_skipped_and_its_target_untouched() -> None:
    write("real.sh", LOOSE)
    os.symlink("real.sh", "link.sh")
    assert main(["--fix", "link.sh"]) == 0
    assert Path("real.sh").read_bytes() == LOOSE and os.path.islink("link.sh")


def test_executable_without_shebang_is_checked_as_sh(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("run", b"set -e\necho hi\n", 0o755)
    assert main(["run"]) == 1
    assert "nounset is off" in capsys.readouterr().out


@pytest.mark.parametrize(
    "data, message",
    [(b"", "skipped: empty file"), (b"#!/bin/bash\n\0\x01", "skipped: binary file")],
)
def test_empty_and_binary_files_get_a_message(
    data: bytes, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write("odd.sh", data)
    assert main(["odd.sh"]) == 0
    assert f"odd.sh: {message}" in capsys.readouterr().err


def test_bad_paths_exit_2_and_the_other_files_are_still_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("loose.sh", LOOSE)
    Path("adir").mkdir()
    assert main(["missing.sh", "adir", "loose.sh"]) == 2
    captured = capsys.readouterr()
    assert "missing.sh: error: no such file" in captured.err
    assert "adir: error: is a directory, not a script" in captured.err
    assert "loose.sh:3:1: SM001" in captured.out


def test_unreadable_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write("locked.sh", LOOSE)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files, "open", refuse, raising=False)
    assert main(["locked.sh"]) == 2
    assert "locked.sh: error: cannot read: Permission denied" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, shown",
    [
        ("with space.sh", "with space.sh"),
        ("-dash.sh", "-dash.sh"),
        ("--fix.sh", "--fix.sh"),
        ("new\nline.sh", "new\\nline.sh"),
    ],
)
def test_awkward_file_names(
    name: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(name, LOOSE)
    assert main([name]) == 1
    assert capsys.readouterr().out.startswith(f"{shown}:3:1: SM001 ")
    assert main(["--fix", name]) == 1
    assert Path(name).read_bytes() == LOOSE_FIXED


def test_double_dash_separates_file_names() -> None:
    write("-v", LOOSE)
    assert main(["--", "-v"]) == 1


def test_config_keys(in_tmp_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp_project / "pyproject.toml").write_text(
        "[tool.mlsmoke.strict-mode]\n"
        'exclude = ["vendor/**", "*.gen.sh"]\n'
        "require-ifs = true\n"
        "require-pipefail-in-sh = true\n"
    )
    write("vendor/a/b.sh", LOOSE)
    write("x.gen.sh", LOOSE)
    write("posix.sh", b"#!/bin/sh\nset -eu\nIFS=\"$(printf '\\n\\t')\"\necho\n")
    write("strict.sh", STRICT)
    assert main(["vendor/a/b.sh", "x.gen.sh", "posix.sh", "strict.sh"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("posix.sh:2:1: SM001 pipefail is off")
    assert "strict.sh:3:1: SM003 IFS is not set" in out
    assert "vendor" not in out and "gen" not in out


@pytest.mark.parametrize(
    "table, message",
    [
        ("exclude = 3", "tool.mlsmoke.strict-mode.exclude: expected an array"),
        ("require-ifs = 'yes'", "tool.mlsmoke.strict-mode.require-ifs: expected true"),
        ("excludes = []", "tool.mlsmoke.strict-mode.excludes: unknown key"),
    ],
)
def test_bad_config_is_a_usage_error(
    table: str, message: str, in_tmp_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp_project / "pyproject.toml").write_text(
        f"[tool.mlsmoke.strict-mode]\n{table}\n"
    )
    write("strict.sh", STRICT)
    assert cli.main(["strict-mode", "strict.sh"]) == 2
    assert message in capsys.readouterr().err


def test_command_line_flags_match_the_config_keys() -> None:
    write("posix.sh", b"#!/bin/sh\nset -eu\necho\n")
    assert main(["posix.sh"]) == 0
    assert main(["--require-pipefail-in-sh", "posix.sh"]) == 1
    assert main(["--require-ifs", "posix.sh"]) == 1


def test_reads_only_the_head_when_it_decides() -> None:
    write("big.sh", STRICT + b"echo filler\n" * 200_000)
    script = files.open_script("big.sh")
    assert isinstance(script, files.Script)
    try:
        assert decide(script, Policy()).passed
        assert len(script.data) <= 2 * files.FIRST_READ and not script.at_eof
    finally:
        script.close()


def test_reads_on_when_the_first_command_comes_late() -> None:
    write("long.sh", b"#!/bin/bash\n" + b"# comment\n" * 5000 + b"echo\n")
    script = files.open_script("long.sh")
    assert isinstance(script, files.Script)
    try:
        assert [p.code for p in decide(script, Policy()).problems] == ["SM001"]
        assert script.at_eof
    finally:
        script.close()


def test_undecodable_bytes_are_escaped_in_messages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("latin.sh", b"#!/bin/bash\necho caf\xe9\n")
    assert main(["latin.sh"]) == 1
    assert "when `echo caf\\udce9` runs" in capsys.readouterr().out


def test_a_failed_write_leaves_the_script_and_no_temporary_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("loose.sh", LOOSE)

    def refuse(source: str, destination: str) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(files.os, "replace", refuse)
    assert main(["--fix", "loose.sh"]) == 2
    assert "loose.sh: error: cannot write: Read-only file system" in (
        capsys.readouterr().err
    )
    assert path.read_bytes() == LOOSE
    assert sorted(os.listdir()) == ["loose.sh", "pyproject.toml"]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can chown"
)
def test_fix_as_root_keeps_the_owner_and_group_of_someone_elses_script() -> None:
    path = write("theirs.sh", LOOSE)
    os.chown(path, 65534, 65533)
    path.chmod(0o4750)
    assert main(["--fix", "theirs.sh"]) == 1
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (65534, 65533)
    assert stat.S_IMODE(info.st_mode) == 0o4750  # set after chown, which clears it
    assert path.read_bytes() == LOOSE_FIXED


def test_fix_writes_through_hard_links(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("a.sh", LOOSE + b"# a long tail the fix must not leave behind\n")
    os.link(path, "b.sh")
    inode = path.stat().st_ino
    assert main(["--fix", "a.sh"]) == 1
    fixed = LOOSE_FIXED + b"# a long tail the fix must not leave behind\n"
    assert path.read_bytes() == fixed and Path("b.sh").read_bytes() == fixed
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    assert sorted(os.listdir()) == ["a.sh", "b.sh", "pyproject.toml"]


def test_a_shorter_rewrite_through_a_hard_link_leaves_no_old_tail(tmp_path: Path):
    from mlsmoke import atomic

    path = tmp_path / "a.txt"
    path.write_bytes(b"0123456789")
    os.link(path, tmp_path / "b.txt")
    atomic.write_atomically(path, b"abc", 0o600)
    assert (tmp_path / "b.txt").read_bytes() == b"abc"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_given_the_project_config_it_checks_its_table_and_no_script(
    in_tmp_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pre-commit runs the hook on a commit that edits pyproject.toml alone."""
    config = in_tmp_project / "pyproject.toml"
    config.write_text("[tool.mlsmoke.strict-mode]\nrequire-ifs = true\n")
    assert cli.main(["strict-mode", "-v", "pyproject.toml"]) == 0
    assert capsys.readouterr() == ("", "")
    config.write_text("[tool.mlsmoke.strict-mode]\nexcludes = []\n")
    assert cli.main(["strict-mode", "pyproject.toml"]) == 2
    assert "tool.mlsmoke.strict-mode.excludes: unknown key" in capsys.readouterr().err
