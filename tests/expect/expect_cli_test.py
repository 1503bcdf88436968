"""``mlsmoke expect`` end to end below pre-commit: the batches read in the project's
interpreter, the record and its diff, the cache, and the exit codes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from mlsmoke.cli import main as cli_main

HERE = Path(__file__).parent
PYPROJECT = '[tool.mlsmoke.expect]\nbatch = "data:train"\n'
LOADER = "import expect_loaders\n\n\ndef train():\n    return expect_loaders.{call}\n"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(HERE / "expect_loaders.py", root)
    (root / "pyproject.toml").write_text(PYPROJECT)
    use_loader(root, "images()")
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    return root


def use_loader(root: Path, call: str) -> None:
    (root / "data.py").write_text(LOADER.format(call=call))


def run(capsys, *args: str) -> tuple[int, str]:
    code = cli_main(["expect", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_record_check_and_a_bug_blocked(project, capsys):
    assert run(capsys) == (
        2,
        f"mlsmoke expect: {project}/expectations.json: no expectations recorded;"
        " run mlsmoke expect --record\n",
    )
    code, out = run(capsys, "--record")
    assert code == 0 and "recorded 13 expectations from 4 batches" in out
    suite = (project / "expectations.json").read_bytes()
    code, out = run(capsys)
    assert code == 0 and "PASS 13 expectations held on 4 batches" in out
    use_loader(project, "images(normalize=0)")
    code, out = run(capsys, "--json", "failures.json")
    assert code == 1
    assert "likely: normalization removed: values ~255x the recorded ones" in out
    assert "mlsmoke expect --record shows the diff" in out
    assert (project / "expectations.json").read_bytes() == suite  # never rewritten
    failures = json.loads((project / "failures.json").read_text())
    assert {f["kind"] for f in failures} == {"mean_std", "value_range"}


def test_a_pass_is_cached_until_an_imported_file_changes(project, capsys):
    run(capsys, "--record")
    assert "(cached)" not in run(capsys)[1]
    assert "PASS (cached)" in run(capsys)[1]
    (project / "unrelated.py").write_text("x = 1\n")  # not imported by the loader
    assert "PASS (cached)" in run(capsys)[1]
    with (project / "expect_loaders.py").open("a") as loader:
        loader.write("\n# a comment changes the content\n")
    code, out = run(capsys)
    assert code == 0 and "(cached)" not in out
    assert "PASS (cached)" in run(capsys)[1]
    (project / "train.bin").write_bytes(b"\0" * 1000)
    (project / "pyproject.toml").write_text(PYPROJECT + 'data = ["*.bin"]\n')
    assert "(cached)" not in run(capsys)[1]  # the table changed
    assert "PASS (cached)" in run(capsys)[1]
    (project / "train.bin").write_bytes(b"\1" * 1000)  # a declared data file
    assert "(cached)" not in run(capsys)[1]


def test_record_again_shows_the_diff_and_keeps_hand_edits(project, capsys):
    run(capsys, "--record")
    path = project / "expectations.json"
    data = json.loads(path.read_text())
    for expectation in data["expectations"]:
        if expectation["kind"] == "value_range" and expectation["field"] == "[0]":
            expectation["max"] = 2.0  # a reviewer widened it
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    use_loader(project, "images(batch=32)")
    code, out = run(capsys, "--record")
    assert code == 0
    assert "= [0] value_range: kept, edited by hand" in out
    assert "~ [1] distinct_classes: batch_size=16 min=4 -> batch_size=32" in out
    again = json.loads(path.read_text())
    kept = [e for e in again["expectations"] if e["kind"] == "value_range"]
    assert kept[0]["max"] == 2.0
    code, out = run(capsys, "--record")
    assert "unchanged" in out


def test_a_field_gone_and_a_new_field_are_one_line_each(project, capsys):
    run(capsys, "--record")
    (project / "data.py").write_text(
        LOADER.format(call="images()")
        + "\n\ndef renamed():\n    for x, y in train():\n"
        "        yield {'pixels': x, '[1]': y}\n"
    )
    (project / "pyproject.toml").write_text(PYPROJECT.replace("train", "renamed"))
    code, out = run(capsys)
    assert code == 1
    assert "[0]: presence: expected present; observed gone: recorded, not in" in out
    assert "pixels: presence: expected no such field; observed a new field" in out


def test_a_loader_that_raises_fails_with_its_traceback(project, capsys):
    (project / "data.py").write_text(
        "def train():\n    return load('train.bin')\n\n\n"
        "def load(name):\n    raise FileNotFoundError(name)\n"
    )
    code, out = run(capsys, "--record")
    assert code == 1
    assert "data:train (tool.mlsmoke.expect.batch) raised FileNotFoundError" in out
    assert 'data.py", line 6, in load' in out
    assert "mlsmoke/expect" not in out  # our frames are left out


def test_a_bad_suite_exits_2_naming_the_file_and_line(project, capsys):
    (project / "expectations.json").write_text('{\n  "format": 7,\n  "exp')
    code, out = run(capsys)
    assert code == 2
    assert f"{project}/expectations.json:3: not valid JSON" in out
    (project / "expectations.json").write_text('{\n  "format": 7\n}\n')
    code, out = run(capsys)
    assert code == 2 and "expectations.json:2: written by a newer mlsmoke" in out


@pytest.mark.parametrize(
    "table,words",
    [
        (
            "[tool.mlsmoke.expect]\nbatches = 1\n",
            "tool.mlsmoke.expect.batches: expected",
        ),
        ("[tool.mlsmoke.expect]\nbatch = 3\n", "tool.mlsmoke.expect.batch: expected"),
        ("[tool.mlsmoke.expect]\nsuite = '../x.json'\n", "tool.mlsmoke.expect.suite"),
        ("[tool.mlsmoke]\n", "tool.mlsmoke.expect.batch: missing"),
        ("[tool.mlsmoke.expect]\nbatch = 'nope:train'\n", "cannot import 'nope'"),
    ],
)
def test_configuration_errors_exit_2_with_the_key(project, capsys, table, words):
    (project / "pyproject.toml").write_text(table)
    code, out = run(capsys, "--record")
    assert code == 2 and words in out


def test_an_unwritable_json_path_exits_2_before_reading(project, capsys):
    code, out = run(capsys, "--json", str(project / "missing" / "out.json"))
    assert code == 2 and "--json" in out and "no such directory" in out


def test_the_gate_batch_is_the_default(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nmodel = "data:train"\nbatch = "data:train"\n'
    )
    code, out = run(capsys, "--record")
    assert code == 0 and "recorded" in out


MODEL = (
    "import expect_models\n\n\ndef build():\n"
    "    open('built', 'a').close()\n"
    "    return expect_models.ImageClassifier(classes={classes})\n"
)


def test_the_gate_model_bounds_the_class_ids(project, capsys):
    shutil.copy(HERE / "expect_models.py", project)
    model = project / "model.py"
    model.write_text(MODEL.format(classes=10))
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[tool.mlsmoke.overfit]\nmodel = "model:build"\n')
    code, out = run(capsys, "--record")
    assert code == 0 and "recorded 14 expectations" in out
    suite = json.loads((project / "expectations.json").read_text())
    (bound,) = [e for e in suite["expectations"] if e["kind"] == "class_ids"]
    assert (bound["field"], bound["outputs"]) == ("[1]", 10)
    assert run(capsys)[0] == 0
    model.write_text(MODEL.format(classes=8))  # the model's file: no cached pass
    code, out = run(capsys)
    assert code == 1, out
    assert "[1]: class_ids: expected below 8" in out
    assert (
        "likely: class ids reach 9, the model has 8 outputs: its head narrowed" in out
    )


def test_a_suite_without_model_bounds_never_builds_the_model(project, capsys):
    shutil.copy(HERE / "expect_models.py", project)
    run(capsys, "--record")  # no model configured yet: no bound recorded
    (project / "model.py").write_text(MODEL.format(classes=10))
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[tool.mlsmoke.overfit]\nmodel = "model:build"\n')
    assert run(capsys, "--no-cache")[0] == 0
    assert not (project / "built").exists()
