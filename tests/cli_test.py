from __future__ import annotations

import subprocess
import sys
import types

import pytest

from mlsmoke import __version__, cli
from mlsmoke.errors import ConfigError


@pytest.fixture
def fake_command(monkeypatch: pytest.MonkeyPatch):
    """Register a subcommand whose main() runs the given function."""

    def register(run) -> None:
        module = types.ModuleType("mlsmoke_fake_command")
        module.main = run
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setitem(cli.COMMANDS, "fake", (module.__name__, "a test command"))

    return register


def test_python_dash_m_prints_the_version() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stdout.strip() == __version__


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for name in ("strict-mode", "doctest", "overfit", "new"):
        assert f"  {name} " in out


def test_unknown_subcommand_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["frobnicate"])
    assert exited.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_arguments_reach_the_subcommand(fake_command) -> None:
    seen = []
    fake_command(lambda argv: seen.append(argv) or 0)
    assert cli.main(["fake", "a", "--b"]) == 0
    assert seen == [["a", "--b"]]


def test_user_errors_are_one_message_and_their_exit_code(
    fake_command, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail(argv):
        raise ConfigError("tool.mlsmoke.fake.key: expected a string, got an integer")

    fake_command(fail)
    assert cli.main(["fake"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "mlsmoke fake: tool.mlsmoke.fake.key: expected a string, got an integer\n"
    )


def test_interrupt_exits_130_without_a_traceback(
    fake_command, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(argv):
        raise KeyboardInterrupt

    fake_command(interrupted)
    assert cli.main(["fake"]) == 130
    assert capsys.readouterr().err == "mlsmoke fake: interrupted\n"
