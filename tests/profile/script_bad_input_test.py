"""A training script that cannot be profiled gets a message naming the flag or key to
fix, in the script's own words where it said any, and exit 2; never a traceback from
mlsmoke."""

from __future__ import annotations

from pathlib import Path

import pytest
from profile_cli import run_profile
from profiled_scripts import QUICK, nanogpt_repo, write_script

ARGPARSE_SCRIPT = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()
"""

NO_OPTIMIZER = """\
import torch

model = torch.nn.Linear(4, 2)
print(model(torch.randn(3, 4)).sum())
"""

NEVER_STEPS = """\
import torch

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(3, 4)).sum().backward()
"""


def assert_usage_error(run, *expected: str) -> None:
    """Exit 2, the message on stdout (the worker's outcome) or stderr (the
    command's own checks), no traceback."""
    said = run.stdout + run.stderr
    assert run.code == 2, said
    assert "Traceback" not in said
    for text in expected:
        assert text in said, said


def test_a_script_that_does_not_exist_names_the_flag(tmp_path: Path) -> None:
    root = write_script(tmp_path / "p", "train.py", NEVER_STEPS)
    run = run_profile(root, "--script", "trian.py")
    assert_usage_error(run, "--script trian.py: no such file")
    assert run.json == []  # nothing ran


def test_a_configured_script_that_does_not_exist_names_the_key(
    tmp_path: Path,
) -> None:
    table = '[tool.mlsmoke.profile]\nscript = "trian.py"\n'
    root = write_script(tmp_path / "p", "train.py", NEVER_STEPS, table)
    run = run_profile(root)
    assert_usage_error(run, "tool.mlsmoke.profile.script: trian.py does not exist")


@pytest.mark.parametrize(
    "table, key",
    [
        ('args = ["--lr=1"]\n', "tool.mlsmoke.profile.args: only with script"),
        ('script = "train.py"\nsteps = 3\n', "tool.mlsmoke.profile.steps: unknown key"),
        ('script = "../train.py"\n', "tool.mlsmoke.profile.script: expected a path"),
        ('script = "train.py"\nargs = 3\n', "tool.mlsmoke.profile.args: expected"),
        (
            'script = "train.py"\nargs = "--device=cpu"\n',
            "tool.mlsmoke.profile.args: expected an array of strings, one per argument",
        ),
    ],
)
def test_a_bad_profile_table_names_its_key(
    tmp_path: Path, table: str, key: str
) -> None:
    root = write_script(tmp_path / "p", "train.py", NEVER_STEPS,
                        "[tool.mlsmoke.profile]\n" + table)  # fmt: skip
    assert_usage_error(run_profile(root), key)


def test_args_the_nanogpt_configurator_rejects_are_quoted_with_the_flag(
    tmp_path: Path,
) -> None:
    root = nanogpt_repo(tmp_path / "nanogpt", pyproject="")
    run = run_profile(root, *QUICK, "--script", "train.py", "--", "--bogus=1",
                      one_cpu=True)  # fmt: skip
    assert_usage_error(
        run,
        "config-error: the arguments after --: `python train.py --bogus=1` raised"
        " ValueError: Unknown config key: bogus at train.py:",
        'exec(open("configurator.py").read()), before building an optimizer',
    )


def test_args_a_configured_gate_script_rejects_name_its_key(tmp_path: Path) -> None:
    root = nanogpt_repo(tmp_path / "nanogpt")
    text = (root / "pyproject.toml").read_text()
    (root / "pyproject.toml").write_text(
        text.replace('args = ["', 'args = ["--nope=2", "')
    )
    run = run_profile(root, *QUICK, one_cpu=True)
    assert_usage_error(
        run, "tool.mlsmoke.overfit.args: `python train.py --nope=2", "nope"
    )


def test_args_argparse_rejects_are_quoted(tmp_path: Path) -> None:
    root = write_script(tmp_path / "p", "train.py", ARGPARSE_SCRIPT)
    run = run_profile(root, "--script", "train.py", "--", "--learning-rate=3",
                      one_cpu=True)  # fmt: skip
    assert_usage_error(
        run,
        "the arguments after --: `python train.py --learning-rate=3` exited with"
        " status 2 before building an optimizer:",
        "unrecognized arguments: --learning-rate=3",
    )


@pytest.mark.parametrize(
    "script, said",
    [
        (NO_OPTIMIZER, "ran to its end without building a torch.optim optimizer"),
        (NEVER_STEPS, "built SGD at train.py:4 but ended before its first"
                      " optimizer.step()"),
    ],
)  # fmt: skip
def test_a_script_that_never_steps_an_optimizer_names_the_flag(
    tmp_path: Path, script: str, said: str
) -> None:
    root = write_script(tmp_path / "p", "train.py", script)
    run = run_profile(root, "--script", "train.py", one_cpu=True)
    assert_usage_error(run, f"--script: `python train.py` {said}")


def test_a_script_that_ends_before_the_profile_names_its_args(tmp_path: Path) -> None:
    root = nanogpt_repo(tmp_path / "nanogpt")
    text = (root / "pyproject.toml").read_text()
    (root / "pyproject.toml").write_text(
        text.replace('args = ["', 'args = ["--max_iters=2", "')
    )
    run = run_profile(root, *QUICK, one_cpu=True)
    assert_usage_error(
        run, "tool.mlsmoke.overfit.args:", "ended after 3 optimizer updates;",
        "the profile needs 6", "fewer with --warmup and --steps",
    )  # fmt: skip


def test_device_is_the_scripts_own(tmp_path: Path) -> None:
    root = write_script(tmp_path / "p", "train.py", NEVER_STEPS)
    run = run_profile(root, "--script", "train.py", "--device", "cpu")
    assert_usage_error(run, "--device: train.py picks its own device")


def test_arguments_after_dashes_need_a_script(tmp_path: Path) -> None:
    from profile_cli import make_project

    root = make_project(tmp_path / "factory")
    run = run_profile(root, "--", "--lr=1")
    assert_usage_error(run, "the arguments after -- are a training script's")


def test_a_gate_global_the_script_never_assigns_names_its_key(tmp_path: Path) -> None:
    table = '[tool.mlsmoke.overfit]\nscript = "train.py"\nglobals = { lrate = 1.0 }\n'
    root = write_script(tmp_path / "p", "train.py", NEVER_STEPS, table)
    assert_usage_error(
        run_profile(root, one_cpu=True),
        "tool.mlsmoke.overfit.globals.lrate: train.py has no module-level assignment"
        " `lrate = ...`",
    )
