"""A diagnosis's own mistake is noted under -v (or raised, for mlsmoke's tests); the
project's errors, and torch's, are not taken for mistakes of mlsmoke's."""

import pytest
import torch

from mlsmoke.overfit.verdict.internal_errors import VARIABLE, note_or_raise
from mlsmoke.overfit.verdict.probes import describe_lr_result


def not_learning(run):  # the diagnosis that raised, as the registry names it
    raise AssertionError("not called")


def _raised(function, *args):
    try:
        function(*args)
    except BaseException as error:  # noqa: B036 - the errors under test
        return error
    raise AssertionError(f"{function} did not raise")


def mlsmoke_mistake() -> BaseException:
    """An AttributeError raised in mlsmoke's own frame (probes.py)."""
    return _raised(describe_lr_result, object())


def test_a_mistake_in_mlsmoke_code_is_noted_with_the_diagnosis_and_line(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    notes: list[str] = []
    note_or_raise(not_learning, mlsmoke_mistake(), notes)
    assert len(notes) == 1
    assert notes[0].startswith(
        "diagnosis internal_errors_test.not_learning skipped, an error in mlsmoke:"
    ), notes
    assert "mlsmoke/overfit/verdict/probes.py:" in notes[0], notes


def test_under_the_variable_the_mistake_is_raised(monkeypatch):
    monkeypatch.setenv(VARIABLE, "raise")
    with pytest.raises(AttributeError):
        note_or_raise(not_learning, mlsmoke_mistake(), [])


def test_errors_from_the_project_or_torch_are_not_mlsmokes(monkeypatch):
    monkeypatch.setenv(VARIABLE, "raise")
    from_the_project = _raised(lambda: object().no_such_field)  # this file's frame
    from_torch = _raised(torch.zeros(2).view, 3)  # a RuntimeError: not a mistake
    an_exit = _raised(lambda: exec("raise SystemExit(1)"))
    notes: list[str] = []
    for error in (from_the_project, from_torch, an_exit):
        note_or_raise(not_learning, error, notes)
    assert notes == []
