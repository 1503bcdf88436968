"""frozen-parameters: a pass with part of the model frozen names what was frozen, by
its outermost module, until the gate's ``frozen`` key declares the freeze."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gitrepo import init_git_repo
from main_test import make_project
from makemore_shaped import Change, write_makemore_repo
from script_mode_test import code, overfit, warnings

from mlsmoke.cli import main as cli_main
from mlsmoke.overfit.process.main import main
from mlsmoke.overfit.verdict.checks.frozen_parameters import (
    declaration_globs,
    frozen_modules,
)

FROZEN_MODEL = """
from overfit_models import MLP


def first_layer_frozen():
    model = MLP()
    model.net[0].requires_grad_(False)  # an experiment's freeze, left in
    return model
"""
GATE = """
[tool.mlsmoke.overfit]
model = "frozen_model:first_layer_frozen"
batch = "overfit_models:mlp_batch"
loss = "overfit_models:mlp_loss"
lr = 0.05
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path / "project", GATE)
    (root / "frozen_model.py").write_text(FROZEN_MODEL)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    return root


def test_a_pass_names_the_frozen_layer_and_the_key_that_declares_it(project, capsys):
    assert main(["--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "PASS memorized" in out
    assert "warning frozen-parameters: net.0.* (" in out
    assert 'tool.mlsmoke.overfit.frozen = ["net.0.*"]' in out

    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write('frozen = ["net.0.*"]\n')
    assert main(["--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "PASS memorized" in out and "frozen-parameters" not in out


def test_a_frozen_value_that_is_not_globs_names_the_key(project, capsys):
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write("frozen = 3\n")
    assert cli_main(["overfit", "--no-cache"]) == 2
    assert capsys.readouterr().err == (
        "mlsmoke overfit: tool.mlsmoke.overfit.frozen: expected an array of strings\n"
    )


NAMES = [
    "embed.weight",
    "blocks.0.fc.weight",
    "blocks.0.fc.bias",
    "blocks.0.proj.weight",
    "blocks.1.fc.weight",
    "head.weight",
]


@pytest.mark.parametrize(
    ("frozen", "shown"),
    [
        ({"blocks.0.fc.weight", "blocks.0.fc.bias"}, ["blocks.0.fc.*"]),
        ({"blocks.0.fc.weight"}, ["blocks.0.fc.weight"]),  # its bias trains
        (
            {"embed.weight", "blocks.0.fc.weight", "blocks.0.fc.bias",
             "blocks.0.proj.weight"},
            ["embed.*", "blocks.0.*"],
        ),  # fmt: skip
        (set(NAMES) - {"head.weight"}, ["embed.*", "blocks.*"]),
    ],
)
def test_frozen_parameters_are_named_by_their_outermost_module_frozen_whole(
    frozen, shown
):
    assert frozen_modules(NAMES, frozen, frozen) == shown


def test_declared_parameters_are_left_out_of_the_names():
    frozen = {"embed.weight", "blocks.1.fc.weight"}
    assert frozen_modules(NAMES, frozen, {"blocks.1.fc.weight"}) == ["blocks.1.*"]


def test_a_freeze_repeated_in_every_layer_is_declared_with_one_glob():
    groups = [f"layers.{i}.attn.*" for i in range(3)]
    training = ["decoder.attn.weight", "head.weight"]  # another attn trains
    assert declaration_globs(groups, training) == ["layers.*.attn.*"]


def test_a_glob_that_would_match_a_trained_layer_keeps_the_index():
    training = ["blocks.1.fc.weight", "head.weight"]
    assert declaration_globs(["blocks.0.*"], training) == ["blocks.0.*"]


def test_a_module_frozen_wherever_it_occurs_is_declared_by_its_name():
    groups = ["model.encoder.base_layer.*", "model.classifier.base_layer.*"]
    training = ["model.encoder.lora_A.default.weight", "model.classifier.lora_B.weight"]
    assert declaration_globs(groups, training) == ["*.base_layer.*"]


def test_a_script_that_freezes_a_block_after_building_the_model_is_named(tmp_path):
    """Script mode reads requires_grad at the script's first update: makemore-shaped,
    block 0 of the Transformer frozen by the script, after the model is built."""
    frozen_block = Change(
        "makemore.py",
        "    model.to(args.device)\n",
        "    model.to(args.device)\n    model.transformer.h[0].requires_grad_(False)\n",
    )
    project = write_makemore_repo(init_git_repo(tmp_path / "makemore"), frozen_block)
    with (project / "pyproject.toml").open("a") as config:
        config.write("max-steps = 100\n")
    ran, result = overfit(project)
    assert code(result) == "memorized", ran.stdout + ran.stderr
    message = warnings(result)["frozen-parameters"]
    assert message.startswith("transformer.h.0.* (")
    assert 'tool.mlsmoke.overfit.frozen = ["transformer.h.0.*"]' in message
