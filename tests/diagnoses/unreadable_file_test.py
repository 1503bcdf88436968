"""A factory that cannot read a file is told so: the path, and the working directory
a relative path was looked for in; not tokenization or padding advice."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import diagnoses
from mlsmoke.overfit.verdict.diagnoses.unreadable_file import (
    ABSENT_IN_A_CLONE,
    PORTABLE_PATHS,
    UnreadableFile,
    unreadable_file,
)
from mlsmoke.overfit.verdict.gate_run import GateRun

_modules = itertools.count()


@pytest.mark.parametrize(
    ("error", "found"),
    [
        (
            FileNotFoundError(2, "No such file or directory", "data/train.pt"),
            UnreadableFile(
                "data/train.pt", "No such file or directory", "/p/data/train.pt"
            ),
        ),
        (
            PermissionError(13, "Permission denied", "/srv/data/train.pt"),
            UnreadableFile("/srv/data/train.pt", "Permission denied", None),
        ),
        (
            IsADirectoryError(21, "Is a directory", b"ckpt"),
            UnreadableFile("ckpt", "Is a directory", "/p/ckpt"),
        ),
        (  # a library's own words (transformers' "Can't load tokenizer")
            OSError("Can't load tokenizer for './tok'.\nMake sure ..."),
            UnreadableFile(None, "Can't load tokenizer for './tok'.", None),
        ),
        (FileNotFoundError("gone"), UnreadableFile(None, "gone", None)),
    ],
)
def test_the_file_an_error_could_not_read(error, found) -> None:
    assert unreadable_file(error, "/p") == found


@pytest.mark.parametrize(
    "error",
    [ConnectionError("refused"), TimeoutError("slow"), ValueError("x"), None],
)
def test_errors_that_are_no_files_are_left_to_others(error) -> None:
    assert unreadable_file(error, "/p") is None


def _run(phase: str, error: BaseException, where: str | None = "/p") -> GateRun:
    evidence = Evidence(error=error, phase=phase, working_directory=where)
    settings = GateSettings(name="default", model="m:m", batch="b:b")

    def unreachable(*args):
        raise AssertionError("no probe: the factory raised")

    return GateRun(
        settings, evidence, unreachable, unreachable, None, unreachable, unreachable
    )


def test_a_batch_factory_that_finds_no_file_is_named_with_the_directory() -> None:
    error = FileNotFoundError(2, "No such file or directory", "data/train.pt")
    found = diagnoses.diagnose(_run("batch", error))
    assert found.code == "data-error"
    assert found.summary == (
        "building the batch could not read data/train.pt: No such file or directory"
        " (FileNotFoundError)"
    )
    assert found.evidence[1] == (
        "data/train.pt is relative to the working directory the factory ran in, /p:"
        " it was looked for as /p/data/train.pt"
    )
    assert found.suggestions == [PORTABLE_PATHS, ABSENT_IN_A_CLONE]
    assert not any("token" in s or "pad" in s for s in found.suggestions)


def test_a_model_factory_that_cannot_read_is_a_train_error_naming_it() -> None:
    error = PermissionError(13, "Permission denied", "/srv/ckpt.pt")
    found = diagnoses.diagnose(_run("model", error))
    assert found.code == "train-error"
    assert found.summary.startswith("building the model could not read /srv/ckpt.pt")
    assert (
        "the factory ran in /p, where relative paths are looked for" in found.evidence
    )
    assert found.suggestions[0] == "make the file readable by the user the hooks run as"


def test_a_file_error_during_training_is_not_this_diagnosis() -> None:
    error = FileNotFoundError(2, "No such file or directory", "log.txt")
    found = diagnoses.diagnose(_run("forward", error))
    assert "could not read" not in found.summary


FACTORIES = """\
import torch
from torch import nn


def model():
    return nn.Linear(4, 2)


def missing_batch():
    return torch.load("data/batch.pt")


def directory_model():
    return torch.load("checkpoints")
"""


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"file_factories_{next(_modules)}"
    (tmp_path / f"{name}.py").write_text(FACTORIES)
    (tmp_path / "checkpoints").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return name


def test_through_the_gate_a_missing_batch_file_names_the_path_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _project(tmp_path, monkeypatch)
    settings = GateSettings(
        name="default", model=f"{module}:model", batch=f"{module}:missing_batch"
    )
    result, _ = run_gate(settings, device="cpu")
    report = result.report()
    assert result.diagnosis.code == "data-error", report
    assert "building the batch could not read data/batch.pt" in report
    assert f"looked for as {tmp_path / 'data' / 'batch.pt'}" in report
    assert "tokenize" not in report and "Traceback (most recent call last)" in report


def test_through_the_gate_a_directory_for_a_checkpoint_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _project(tmp_path, monkeypatch)
    settings = GateSettings(
        name="default", model=f"{module}:directory_model", batch=f"{module}:model"
    )
    result, _ = run_gate(settings, device="cpu")
    report = result.report()
    assert result.diagnosis.code == "train-error", report
    assert "building the model could not read checkpoints: Is a directory" in report
    assert "name a file in that directory, not the directory" in report
