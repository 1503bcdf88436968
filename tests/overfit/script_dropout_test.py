"""dropout-active's advice in script mode names only knobs the script has: its own
dropout setting, else its module-level rate for globals, else the model's config that
sets the rates, else the model's code."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from mlsmoke.overfit.verdict.script_dropout import advice

ARGPARSE = 'p.add_argument("--dropout", type=float, default=0.1)\n'
CONFIGURATOR = 'dropout = 0.2\nexec(open("configurator.py").read())\n'
NO_SETTING = 'p.add_argument("--epochs", type=int, default=3)\n'


@pytest.fixture
def script(tmp_path):
    def write(source: str) -> str:
        (tmp_path / "train.py").write_text(source)
        return "train.py"

    cwd = os.getcwd()
    os.chdir(tmp_path)
    yield write
    os.chdir(cwd)


@pytest.mark.parametrize(
    ("source", "option"), [(ARGPARSE, "--dropout"), (CONFIGURATOR, "--dropout")]
)
def test_a_scripts_own_dropout_setting_is_named_for_args(script, source, option):
    assert advice(script(source), None) == f"so set train.py's {option} to 0 in args"


class BertConfig(SimpleNamespace):
    pass


def test_without_a_setting_the_models_config_that_sets_the_rates_is_named(script):
    config = BertConfig(
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        classifier_dropout=None, hidden_size=32,
    )  # fmt: skip
    said = advice(script(NO_SETTING), SimpleNamespace(config=config))
    assert said.startswith("but train.py takes no dropout setting that args could give")
    assert (
        "BertConfig sets it (hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)"
        in said
    )
    assert "judged in eval mode" in said and "to 0 in args" not in said


def test_without_a_setting_or_a_config_the_models_code_is_named(script):
    said = advice(script(NO_SETTING), object())
    assert "the model's code sets it" in said


def test_a_module_level_rate_without_arguments_is_named_for_globals(script):
    source = "batch_size = 64\ndropout = 0.2\nif True:\n    attn_drop_rate = 0.1\n"
    said = advice(script(source), object())
    assert said == (
        "so give train.py's module-level dropout and attn_drop_rate 0 for the gate:"
        " globals = { dropout = 0.0, attn_drop_rate = 0.0 }"
    )
