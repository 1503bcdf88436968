"""Buildable candidates and the factory module init writes when there are none: read
from the source, never imported, and code that the project's own hooks accept."""

from __future__ import annotations

import ast
import sys

import black
import pytest
import torch
from script_repo import write_library_repo, write_script_repo

from mlsmoke.adopt.candidates import find, runs_on_import
from mlsmoke.adopt.gate_module import gate_module


def found_in(repo):
    paths = [path.relative_to(repo).as_posix() for path in repo.rglob("*.py")]
    return find(repo, paths)


@pytest.mark.parametrize(
    ("source", "runs"),
    [
        ("import torch\nx = 1\ndef f():\n    pass\n", False),
        ('"""doc"""\nclass A:\n    pass\n', False),
        ("if __name__ == '__main__':\n    main()\n", False),
        ("exec(open('configurator.py').read())\n", True),
        ("for i in range(3):\n    pass\n", True),
        ("while True:\n    break\n", True),
        ("train()\n", True),
    ],
)
def test_a_module_that_works_when_imported_is_recognised(source, runs):
    assert runs_on_import(ast.parse(source)) is runs


def test_a_script_repositorys_candidates_are_only_what_can_be_built(tmp_path):
    found = found_in(write_script_repo(tmp_path))
    assert found.models == [] and found.batches == []
    passed_over = {c.spec: c.why for c in found.passed_over}
    assert passed_over["train:get_batch"] == "its module runs when imported"
    assert passed_over["model:GPT"] == "needs config"
    (gpt,) = [c for c in found.configurable if c.name == "GPT"]
    assert gpt.config.name == "GPTConfig" and gpt.recipe is not None


def test_the_factory_module_builds_a_tiny_gpt_with_its_own_recipe(
    tmp_path, monkeypatch
):
    repo = write_script_repo(tmp_path)
    written = gate_module(found_in(repo))
    assert written.todo == []
    assert (written.model, written.batch, written.optimizer) == (
        "mlsmoke_gate:model",
        "mlsmoke_gate:batch",
        "mlsmoke_gate:optimizer",
    )
    assert black.format_str(written.text, mode=black.Mode()) == written.text
    (repo / "mlsmoke_gate.py").write_text(written.text)
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.delitem(sys.modules, "model", raising=False)
    import mlsmoke_gate

    model = mlsmoke_gate.model()
    assert model.config.n_layer == 1 and model.config.n_embd == 32
    inputs, targets = mlsmoke_gate.batch()
    logits, loss = model(inputs, targets)
    assert torch.isfinite(loss)
    optimizer = mlsmoke_gate.optimizer(model)
    assert [group["weight_decay"] for group in optimizer.param_groups] == [0.1, 0.0]
    monkeypatch.delitem(sys.modules, "mlsmoke_gate")


def test_a_library_of_required_arguments_gets_todos_not_guesses(tmp_path):
    found = found_in(write_library_repo(tmp_path))
    assert found.models == [] and found.configurable == []
    written = gate_module(found)
    assert len(written.todo) == 2 and written.optimizer is None
    assert "TransformerWrapper(num_tokens, max_seq_len, dim, depth)" in written.text
    assert "import" not in written.text  # nothing unused for flake8 to flag
    assert black.format_str(written.text, mode=black.Mode()) == written.text
    compile(written.text, "mlsmoke_gate.py", "exec")


PARTS = """\
import torch.nn as nn


class NewGELU(nn.Module):
    def forward(self, x):
        return x * 0.5


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc = nn.Linear(config.n_embd, config.n_embd)
        self.act = NewGELU()


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
"""


def test_a_part_another_model_class_builds_is_not_the_gates_model(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "model.py").write_text(PARTS)
    found = find(tmp_path, ["lib/model.py"])
    assert found.models == []
    passed_over = {c.spec: c.why for c in found.passed_over}
    assert passed_over["lib.model:NewGELU"] == "a part of Block"
    written = gate_module(found)
    assert written.model == "mlsmoke_gate:model"
    assert "build GPT(config) of lib.model" in written.text
    # Built by no other class, a model class without arguments is still one.
    (tmp_path / "lib" / "model.py").write_text(PARTS.replace("NewGELU()", "nn.GELU()"))
    found = find(tmp_path, ["lib/model.py"])
    assert [c.spec for c in found.models] == ["lib.model:NewGELU"]
