"""A shape error names the line of the project's code where the tensors met: the
innermost frame outside installed packages, the standard library and mlsmoke."""

from __future__ import annotations

import itertools
import traceback
from pathlib import Path

import pytest

import mlsmoke
from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.project_frames import (
    frame_line,
    innermost_project_frame,
    is_project_file,
    library_directories,
    raised_at,
)

_modules = itertools.count()
LIBRARIES = ["/usr/lib/python3.12", "/opt/hooks/mlsmoke"]


def frame(filename: str, lineno: int, line: str) -> traceback.FrameSummary:
    return traceback.FrameSummary(filename, lineno, "f", line=line)


@pytest.mark.parametrize(
    ("filename", "project"),
    [
        ("/home/me/proj/model.py", True),
        ("/home/me/proj/.venv/lib/python3.12/site-packages/torch/nn/linear.py", False),
        ("/usr/lib/python3/dist-packages/transformers/modeling_bert.py", False),
        ("/usr/lib/python3.12/functools.py", False),
        ("/opt/hooks/mlsmoke/overfit/training/engine.py", False),
        ("/opt/hooks/mlsmoke-data/model.py", True),  # a prefix of a name is no parent
        ("<string>", False),
    ],
)
def test_project_files_are_outside_packages_libraries_and_mlsmoke(
    filename: str, project: bool
) -> None:
    assert is_project_file(filename, LIBRARIES) is project


def test_the_innermost_project_frame_is_where_the_tensors_met() -> None:
    frames = [
        frame("/opt/hooks/mlsmoke/overfit/training/engine.py", 80, "loss = step()"),
        frame("/p/model.py", 187, "    x = self.proj(h)"),
        frame("/p/layers.py", 12, "    return a @ b"),
        frame("/v/site-packages/torch/nn/modules/module.py", 1775, "return f(x)"),
    ]
    found = innermost_project_frame(frames, LIBRARIES)
    assert found is frames[2]
    assert frame_line(found, "/p") == "layers.py:12: return a @ b"
    assert innermost_project_frame(frames[:1] + frames[3:], LIBRARIES) is None


def test_mlsmoke_and_the_standard_library_are_libraries() -> None:
    libraries = library_directories()
    assert not is_project_file(mlsmoke.__file__, libraries)
    assert not is_project_file(traceback.__file__, libraries)
    assert is_project_file(__file__, libraries)


def test_an_error_without_a_project_frame_has_no_line() -> None:
    assert raised_at(None, "/p") is None
    assert raised_at(ValueError("never raised"), "/p") is None


MODELS = """\
import torch
from torch import nn


def merge(a, b):
    return a + b  # (B, 32) + (B, 16)


class Projected(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 32)
        self.proj = nn.Linear(64, 4)

    def forward(self, x):
        h = torch.relu(self.body(x))  # (B, 32)
        x = self.proj(h)
        return x


class Merged(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 32)

    def forward(self, x):
        return merge(self.body(x), x).sum(-1, keepdim=True)


def batch():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


def loss(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()
"""


@pytest.mark.parametrize(
    ("model", "place", "line"),
    [
        ("Projected", "module 'proj'", "models_{}.py:17: x = self.proj(h)"),
        (
            "Merged",
            "the model's forward",
            "models_{}.py:6: return a + b  # (B, 32) + (B, 16)",
        ),
    ],
)
def test_through_the_gate_the_shape_error_names_the_projects_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, place: str, line: str
) -> None:
    number = next(_modules)
    (tmp_path / f"models_{number}.py").write_text(MODELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    module = f"models_{number}"
    settings = GateSettings(
        name="default",
        model=f"{module}:{model}",
        batch=f"{module}:batch",
        loss=f"{module}:loss",
    )
    result, _ = run_gate(settings, device="cpu")
    diagnosis = result.diagnosis
    assert diagnosis.code == "shape-error", result.report()
    where = line.format(number)
    assert diagnosis.summary == f"shapes do not match in {place}, at {where}"
    assert diagnosis.evidence[0] == f"where they met, in the project's code: {where}"
