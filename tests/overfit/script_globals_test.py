"""``globals``: the values the gate gives a script's module-level assignments, for a
script that sets its sizes in its source and reads no arguments."""

from __future__ import annotations

import ast
import os

import pytest

from mlsmoke.errors import ConfigError
from mlsmoke.overfit.process.settings import load_gates
from mlsmoke.overfit.training.script_globals import assigned_names, give_globals

SOURCE = """\
import torch
batch_size = 64
block_size: int = 256
if torch.cuda.is_available():
    device = 'cuda'
else:
    device = 'cpu'
try:
    eval_iters = 200
except ImportError:
    eval_iters = 1
out_dir = 'out'

def train(batch_size=3):
    batch_size = 5
    return batch_size

class Config:
    batch_size = 7

result = (batch_size, block_size, device, eval_iters, out_dir, train(),
          Config.batch_size)
"""


def run(values: dict, env: dict | None = None) -> tuple:
    tree = ast.parse(SOURCE)
    assert give_globals(tree, values) == []
    namespace: dict = {}
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        exec(compile(tree, "train.py", "exec"), namespace)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return namespace["result"]


def test_every_module_level_assignment_of_a_name_gets_its_value_and_no_other():
    given = {"batch_size": 4, "block_size": 16, "device": "cpu", "eval_iters": 2}
    assert run(given) == (4, 16, "cpu", 2, "out", 5, 7)
    assert run({}) == (64, 256, "cpu", 200, "out", 5, 7)


def test_out_dir_in_a_string_is_the_gates_directory_when_the_line_runs():
    result = run({"out_dir": "{out_dir}/ckpt"}, {"MLSMOKE_OUT_DIR": "/tmp/gate-x"})
    assert result[4] == "/tmp/gate-x/ckpt"


def test_the_names_no_module_level_assignment_sets_are_returned():
    tree = ast.parse(SOURCE)
    missing = give_globals(tree, {"batch_sz": 4, "Config": 1, "batch_size": 4})
    assert missing == ["batch_sz", "Config"]  # a class statement is no assignment


def test_the_names_a_script_assigns_at_module_level_in_order(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    names = assigned_names(str(tmp_path / "train.py"))
    assert names == ["batch_size", "block_size", "device", "eval_iters", "out_dir",
                     "result"]  # fmt: skip
    assert assigned_names(str(tmp_path / "missing.py")) == []


def gates(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.mlsmoke.overfit]\n{table}")
    return load_gates(tmp_path)


def test_globals_are_read_as_a_table_not_as_a_gate(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    table = 'script = "train.py"\nglobals = { batch_size = 4, device = "cpu" }\n'
    (gate,) = gates(tmp_path, table)
    assert gate.name == "default" and gate.globals == {"batch_size": 4,
                                                       "device": "cpu"}  # fmt: skip
    table = 'script = "train.py"\n[tool.mlsmoke.overfit.globals]\nbatch_size = 4\n'
    (gate,) = gates(tmp_path, table)
    assert gate.globals == {"batch_size": 4}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('globals = { batch_size = 4 }\nmodel = "m:f"\nbatch = "b:f"\n',
         'tool.mlsmoke.overfit.globals: only with script = "train.py"'),
        ('script = "train.py"\nglobals = 4\n',
         "tool.mlsmoke.overfit.globals: expected a table of the script's"),
        ('script = "train.py"\nglobals = { "batch size" = 4 }\n',
         "tool.mlsmoke.overfit.globals.batch size: not a Python name"),
        ('script = "train.py"\nglobals = { class = 4 }\n',
         "tool.mlsmoke.overfit.globals.class: not a Python name"),
        ('script = "train.py"\nglobals = { day = 2026-11-27 }\n',
         "tool.mlsmoke.overfit.globals.day: expected a string, a number, a"),
        ('script = "train.py"\nglobals = { lr = nan }\n',
         "tool.mlsmoke.overfit.globals.lr: expected a string, a number, a"),
    ],
)  # fmt: skip
def test_bad_globals_are_named_by_their_key(tmp_path, table, message):
    (tmp_path / "train.py").write_text(SOURCE)
    with pytest.raises(ConfigError) as raised:
        gates(tmp_path, table)
    assert message in str(raised.value)
