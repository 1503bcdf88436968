"""Taking the result of a hook's run ahead: only the same pre-commit run's, with the
same arguments and keys, once, and never by waiting past the patience."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from mlsmoke.ahead import runs as ahead

KEYS = {"default": "0" * 24}
HOOK = "overfit-batch"


@pytest.fixture
def under_pre_commit(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PRE_COMMIT", "1")
    run_id = ahead.pre_commit_run()
    assert run_id
    return run_id


def _result(root: Path, **fields: object) -> None:
    result = {"run": ahead.pre_commit_run(), "argv": [], "keys": KEYS}
    result.update(stdout="overfit default: PASS\n", stderr="", code=0)
    result.update(fields)
    path = root / ".mlsmoke" / "ahead" / "overfit-batch.json"
    path.write_text(json.dumps(result))


def _released(root: Path) -> None:
    os.close(ahead.hold(root, HOOK))


def test_outside_pre_commit_nothing_is_taken(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    assert ahead.take(tmp_path, HOOK, [], KEYS, patience=5) is None
    assert not (tmp_path / ".mlsmoke").exists()


def test_the_same_runs_result_is_taken_once(tmp_path: Path, under_pre_commit):
    _released(tmp_path)
    _result(tmp_path, code=1, stdout="overfit default: FAIL lr-too-low\n")
    taken = ahead.take(tmp_path, HOOK, [], KEYS, patience=5)
    assert taken == ahead.Taken("overfit default: FAIL lr-too-low\n", "", 1)
    assert ahead.take(tmp_path, HOOK, [], KEYS, patience=5) is None


@pytest.mark.parametrize(
    "argv, keys",
    [(["--no-cache"], KEYS), ([], {"default": "1" * 24}), ([], {})],
    ids=["other arguments", "another key", "no gate"],
)
def test_other_arguments_or_keys_take_nothing(
    tmp_path: Path, under_pre_commit, argv, keys
):
    _released(tmp_path)
    _result(tmp_path)
    assert ahead.take(tmp_path, HOOK, argv, keys, patience=5) is None


def test_another_runs_result_is_not_taken(tmp_path: Path, under_pre_commit):
    _released(tmp_path)
    _result(tmp_path, run="1:12345")
    assert ahead.take(tmp_path, HOOK, [], KEYS, patience=5) is None


def test_a_garbled_result_is_not_taken(tmp_path: Path, under_pre_commit):
    _released(tmp_path)
    (tmp_path / ".mlsmoke" / "ahead" / "overfit-batch.json").write_text('{"run": ')
    assert ahead.take(tmp_path, HOOK, [], KEYS, patience=5) is None


def test_a_lock_of_another_run_is_not_waited_for(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PRE_COMMIT", "1")
    held = ahead.hold(tmp_path, HOOK)  # taken for this run
    try:
        monkeypatch.setattr(ahead, "pre_commit_run", lambda: "1:12345")
        started = time.monotonic()
        assert ahead.take(tmp_path, HOOK, [], KEYS, patience=30) is None
        assert time.monotonic() - started < 10
    finally:
        os.close(held)


def test_a_run_ahead_that_never_ends_is_given_up_on(tmp_path: Path, under_pre_commit):
    held = ahead.hold(tmp_path, HOOK)
    try:
        _result(tmp_path)
        started = time.monotonic()
        assert ahead.take(tmp_path, HOOK, [], KEYS, patience=0.3) is None
        assert time.monotonic() - started >= 0.3
    finally:
        os.close(held)


def test_a_second_run_ahead_is_refused_while_one_holds_the_lock(
    tmp_path: Path, under_pre_commit
):
    held = ahead.hold(tmp_path, HOOK)
    try:
        assert held is not None and ahead.hold(tmp_path, HOOK) is None
    finally:
        os.close(held)


def test_skip_names_the_hooks_not_to_run_ahead(monkeypatch):
    monkeypatch.setenv("SKIP", "flake8, overfit-batch")
    assert ahead.skipped("overfit-batch") and not ahead.skipped("torchfix")


def test_results_of_two_hooks_are_apart(tmp_path: Path, under_pre_commit):
    for hook in (HOOK, "torchfix"):
        os.close(ahead.hold(tmp_path, hook))
    _result(tmp_path, stdout="the gate's\n")
    assert ahead.take(tmp_path, "torchfix", [], KEYS, patience=5) is None
    assert ahead.take(tmp_path, HOOK, [], KEYS, patience=5).stdout == "the gate's\n"
