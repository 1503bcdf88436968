"""The suites' decisions on plain values: the file format, the comparison with its
tolerance and the global-shift check, the settings' messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlsmoke.errors import ConfigError
from mlsmoke.suites import settings as schema
from mlsmoke.suites.comparison import compare_all
from mlsmoke.suites.records import Evaluation, Example
from mlsmoke.suites.report import check_lines
from mlsmoke.suites.suite_file import (
    SuiteFile,
    SuiteFileError,
    read,
    read_directory,
    render,
    write,
)


def evaluation(scores: list[float]) -> Evaluation:
    return Evaluation.of_examples([Example(i, f"h{i}", 1.0 - s, s, int(s), 1)
                                   for i, s in enumerate(scores)])  # fmt: skip


def suite(name: str, scores: dict[int, float]) -> SuiteFile:
    examples = [{"index": i, "hash": f"h{i}", "label": 1, "prediction": int(s),
                 "loss": 1.0 - s, "score": s} for i, s in scores.items()]  # fmt: skip
    mean = sum(scores.values()) / len(scores)
    return SuiteFile.of_examples(name, "slice", "", {"score": mean, "loss": 1 - mean},
                                 examples)  # fmt: skip


SETTINGS = schema.SuitesSettings(model="m:f", dataset="d:f", tolerance=0.05)


def test_a_drop_within_the_tolerance_holds() -> None:
    recorded = [suite("whole-set", {i: 1.0 for i in range(20)}),
                suite("slice-a", {i: 1.0 for i in range(20)})]  # fmt: skip
    now = evaluation([1.0] * 19 + [0.0])  # slice-a: 0.95, drop 0.05 == tolerance
    comparison = compare_all(recorded, now, SETTINGS)
    assert comparison.passed
    assert comparison.suites[0].flips[0].index == 19


def test_a_suite_that_falls_alone_is_not_a_global_shift() -> None:
    recorded = [suite("whole-set", {i: 1.0 for i in range(100)}),
                suite("slice-a", {i: 1.0 for i in range(10)})]  # fmt: skip
    now = evaluation([0.0] * 10 + [1.0] * 90)
    comparison = compare_all(recorded, now, SETTINGS)
    assert not comparison.passed
    assert comparison.whole_set.regressed  # 0.1 > 0.05
    assert comparison.suites[0].regressed and not comparison.suites[0].global_shift


def test_a_suite_that_follows_the_whole_set_is_a_global_shift() -> None:
    recorded = [suite("whole-set", {i: 1.0 for i in range(100)}),
                suite("slice-a", {i: 1.0 for i in range(10)})]  # fmt: skip
    now = evaluation([0.0 if i % 5 == 0 else 1.0 for i in range(100)])
    comparison = compare_all(recorded, now, SETTINGS)
    assert comparison.suites[0].regressed and comparison.suites[0].global_shift


def losses_now(scores: list[float], losses: list[float]) -> Evaluation:
    pairs = enumerate(zip(scores, losses))
    return Evaluation.of_examples(
        [Example(i, f"h{i}", loss, s, int(s), 1) for i, (s, loss) in pairs]
    )


def test_right_examples_much_less_sure_fail_their_suite_and_wrong_ones_do_not():
    right = suite("slice-right", {i: 1.0 for i in range(10)})  # loss 0 each
    wrong = suite("slice-wrong", {i: 0.0 for i in range(10, 20)})  # loss 1 each
    whole = suite("whole-set", {i: float(i < 10) for i in range(20)})
    recorded = [whole, right, wrong]
    # every prediction holds; the right ones lose confidence, the wrong ones gain it
    now = losses_now([1.0] * 10 + [0.0] * 10, [0.1] * 9 + [0.9] + [4.0] * 10)
    settings = schema.SuitesSettings(model="m:f", dataset="d:f", loss_tolerance=0.1)
    comparison = compare_all(recorded, now, settings)
    assert not comparison.passed
    held_right, held_wrong = comparison.suites
    assert held_right.loss_regressed and not held_right.score_regressed
    assert held_right.right == 10 and abs(held_right.loss_rise - 0.18) < 1e-9
    assert [flip.index for flip in held_right.less_sure] == [9]  # up 0.9 > 0.1
    assert not held_wrong.regressed and held_wrong.right == 0
    assert not held_right.global_shift
    text = "\n".join(check_lines(comparison))
    assert "REGRESSED (less sure)" in text
    assert "slice-right: the 10 example(s) right at record time are less sure" in text
    assert "1 still right with a loss up by more than 0.1:" in text
    assert compare_all(recorded, now, SETTINGS).passed  # no loss tolerance: held
    within = schema.SuitesSettings(model="m:f", dataset="d:f", loss_tolerance=0.2)
    assert compare_all(recorded, now, within).passed  # up 0.18 <= 0.2


@pytest.mark.parametrize(
    ("keys", "expected"),
    [("", schema.DEFAULT_LOSS_TOLERANCE), ('loss = "l:f"', None),
     ('loss = "l:f"\nloss-tolerance = 0.5', 0.5), ("loss-tolerance = false", None)],
)  # fmt: skip
def test_the_loss_tolerance_is_in_nats_for_the_default_loss_only(
    tmp_path: Path, keys: str, expected: float | None
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.mlsmoke.suites]\nmodel = "m:f"\ndataset = "d:f"\n{keys}\n'
    )
    assert schema.load(tmp_path).loss_tolerance == expected


def test_suite_file_is_sorted_stable_and_round_trips(tmp_path: Path) -> None:
    recorded = suite("slice-a", {3: 1.0, 1: 0.0, 2: 1 / 3})
    text = render(recorded)
    assert render(recorded) == text
    assert (
        '"columns": ["index", "hash", "label", "prediction", "loss", "score"],\n'
        ' "examples": [\n'
        '  [1, "h1", 1, 0, 1, 0],\n'
        '  [2, "h2", 1, 0, 0.666667, 0.333333],\n'
        '  [3, "h3", 1, 1, 0, 1]\n'
        " ]\n}\n"
    ) in text
    path = write(tmp_path, recorded)
    back = read(path)
    assert back.examples[0] == {"index": 1, "hash": "h1", "label": 1,
                                "prediction": 0, "loss": 1, "score": 0}  # fmt: skip
    assert back.columns["loss"] == [1, 0.666667, 0]  # 6 significant digits
    assert write(tmp_path, back) == path and path.read_text() == text  # stable
    assert json.loads(text)["version"] == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 7}, "suite 'slice-a', key \"version\": version 7"),
        ({"format": "other"}, 'key "format"'),
        ({"columns": ["index", "label"]}, 'key "columns": "hash" missing'),
        ({"examples": [[0, "h0", 1]]},
         "examples[0]: 3 values, not one per column (index, hash, label,"),
        ({"examples": [{"index": 0}]}, "examples[0]: a dict, not one per column"),
        ({"examples": [[0, 7, 1, 1, 0.0, 1.0]]}, 'examples[0]: column "hash"'),
    ],
)  # fmt: skip
def test_a_foreign_suite_file_is_named(tmp_path: Path, change, message) -> None:
    path = tmp_path / "slice-a.json"
    path.write_text(json.dumps({**json.loads(render(suite("slice-a", {0: 1.0}))),
                                **change}))  # fmt: skip
    with pytest.raises(SuiteFileError, match=None) as raised:
        read(path)
    assert message in str(raised.value) and str(path) in str(raised.value)


def test_a_version_1_file_asks_for_a_new_record(tmp_path: Path) -> None:
    """Version 1 kept each example as an object with its keys, and BLAKE2b hashes."""
    path = tmp_path / "hard.json"
    path.write_text(json.dumps({
        "format": "mlsmoke-suite", "version": 1, "name": "hard", "kind": "hard",
        "note": "", "metric": {"loss": 0.1, "score": 1.0}, "recorded": {},
        "examples": [{"hash": "5d08808aecb9da09", "index": 4, "label": 1,
                      "loss": 0.00548607, "prediction": 1, "score": 1.0}],
    }))  # fmt: skip
    with pytest.raises(SuiteFileError) as raised:
        read(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: suite 'hard', key \"version\": version 1")
    assert "reads version 2" in message and "mlsmoke suites record" in message


def test_no_record_is_named(tmp_path: Path) -> None:
    with pytest.raises(SuiteFileError, match="run mlsmoke suites record first"):
        read_directory(tmp_path / "suites")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('model = "m:f"', "tool.mlsmoke.suites.dataset: missing"),
        ('dataset = "d:f"', "tool.mlsmoke.suites.model: missing"),
        ('model = "m:f"\ndataset = "d:f"\ntolerance = 2',
         "tool.mlsmoke.suites.tolerance: expected a number from 0 to 1"),
        ('model = "m:f"\ndataset = "d:f"\ntolerances = {hardest = 0.1}',
         "tool.mlsmoke.suites.tolerances.hardest: no such suite"),
        ('model = "m:f"\ndataset = "d:f"\n[tool.mlsmoke.suites.by-hand.hard]\n'
         "indices = [1]", "tool.mlsmoke.suites.by-hand.hard: 'hard' is the name"),
        ('model = "m:f"\ndataset = "d:f"\n[tool.mlsmoke.suites.by-hand.x]\nnote = "a"',
         "tool.mlsmoke.suites.by-hand.x.indices: missing"),
        ('model = "m:f"\ndataset = "d:f"\nloss-tolerance = -1',
         "tool.mlsmoke.suites.loss-tolerance: expected a number from 0 up"),
        ('model = "m:f"\ndataset = "d:f"\nloss-tolerance = true',
         "tool.mlsmoke.suites.loss-tolerance: expected a number from 0 up"),
    ],
)  # fmt: skip
def test_settings_errors_name_the_key(tmp_path: Path, table: str, message: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.mlsmoke.suites]\n{table}\n")
    with pytest.raises(ConfigError) as raised:
        schema.load(tmp_path)
    assert message in str(raised.value)


def test_the_gate_model_is_shared(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nmodel = "pkg.model:build"\nbatch = "b:f"\n'
        '[tool.mlsmoke.suites]\ndataset = "d:f"\n'
        '[tool.mlsmoke.suites.by-hand.issue-123]\nindices = [4, 2]\nnote = "#123"\n'
        "tolerance = 0.0\n"
    )
    loaded = schema.load(tmp_path)
    assert loaded.model == "pkg.model:build"
    assert loaded.by_hand[0].indices == [2, 4]
    assert loaded.tolerance_of("issue-123") == 0.0
    assert loaded.tolerance_of("hard") == schema.DEFAULT_TOLERANCE


def test_record_writes_hand_suites_with_their_note(tmp_path: Path) -> None:
    from mlsmoke.suites import session

    settings = schema.SuitesSettings(
        model="m:f", dataset="d:f", hard=2,
        by_hand=[schema.HandSuite("issue-123", [1, 3], "the example behind #123")],
    )  # fmt: skip
    recorded = session.record(settings, evaluation([1.0, 0.0, 1.0, 0.5]), tmp_path)
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["hard.json", "issue-123.json", "whole-set.json", "wrong.json"]
    hand = read(tmp_path / "issue-123.json")
    assert hand.note == "the example behind #123" and hand.kind == "by-hand"
    assert [e["index"] for e in hand.examples] == [1, 3]
    assert [e["index"] for e in read(tmp_path / "hard.json").examples] == [1, 3]
    assert recorded.label_issues == []  # no probabilities: no hint
    stale = tmp_path / "slice-gone.json"
    stale.write_text(render(suite("slice-gone", {0: 1.0})))
    again = session.record(settings, evaluation([1.0, 0.0, 1.0, 0.5]), tmp_path)
    assert again.removed == [stale] and not stale.exists()


@pytest.mark.parametrize("nan_at", [None, 0, 5, 9])
def test_hard_takes_the_highest_losses_nan_first_and_the_lower_index_of_equals(
    nan_at,
) -> None:
    from mlsmoke.suites.kinds import hard

    losses = [0.5, 2.0, 0.1, 2.0, 3.0, 0.7, 2.0, 0.2, 3.0, 0.3]
    if nan_at is not None:
        losses[nan_at] = float("nan")
    examples = [Example(i, f"h{i}", loss, 0.0, 0, 1) for i, loss in enumerate(losses)]
    chosen = hard.select(Evaluation.of_examples(examples),
                         schema.SuitesSettings(model="m:f", dataset="d:f",
                                               hard=4))  # fmt: skip
    ranked = sorted(range(len(losses)), key=lambda i: (
        -(losses[i] if losses[i] == losses[i] else float("inf")), i))  # fmt: skip
    assert chosen[0].indices == sorted(ranked[:4])
    assert (nan_at is None) or nan_at in chosen[0].indices
    assert (nan_at in (4, 8)) or {4, 8} <= set(chosen[0].indices)


def test_slices_list_their_members_in_dataset_order() -> None:
    from mlsmoke.suites.kinds import slices

    names = ["b", None, "a", "b", "a", None, "b"]
    examples = [Example(i, f"h{i}", 1.0, 1.0, 0, 0, slice=name)
                for i, name in enumerate(names)]  # fmt: skip
    chosen = slices.select(Evaluation.of_examples(examples),
                           schema.SuitesSettings(model="m:f", dataset="d:f",
                                                 slice="p:arm"))  # fmt: skip
    assert [(s.name, s.indices) for s in chosen] == [
        ("slice-a", [2, 4]), ("slice-b", [0, 3, 6])]  # fmt: skip
