"""Where a training script sets its lr: a constant, an argument, a parser default."""

from __future__ import annotations

import pytest

from mlsmoke.overfit.training.script_lr import lr_origin
from mlsmoke.overfit.training.script_process import Script

CONSTANT = "batch_size = 8\nlearning_rate = 6e-7\nweight_decay = 0.1\n"
PARSER = (
    "import argparse\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument('--epochs', type=int, default=10)\n"
    "parser.add_argument('--lr', type=float, default=1e-7)\n"
)


@pytest.mark.parametrize(
    ("source", "args", "lr", "origin"),
    [
        (CONSTANT, [], 6e-7, "train.py:2 (learning_rate = 6e-07)"),
        (
            CONSTANT,
            ["--learning_rate=3e-4"],
            3e-4,
            "args of train.py (--learning_rate=3e-4)",
        ),
        (PARSER, [], 1e-7, "train.py:4 (--lr default 1e-07)"),
        (PARSER, [], 5e-3, ""),
        ("x = (\n", [], 1e-3, ""),
        (CONSTANT, [], 0.0, ""),
    ],
)
def test_the_lr_is_traced_to_the_line_or_argument_that_sets_it(
    tmp_path, source, args, lr, origin
):
    (tmp_path / "train.py").write_text(source)
    assert lr_origin(Script(tmp_path, "train.py", args), lr) == origin
