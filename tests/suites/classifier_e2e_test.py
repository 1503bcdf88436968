"""``mlsmoke suites`` on a small classifier, run as users run it: a checkpoint trained
further holds its suites, one that lost a class fails that class's slice and lists
the examples that flipped, and neither check touches the recorded suites."""

from __future__ import annotations

import json
from pathlib import Path

import torch

import suites_project
from suites_cli import Project, run_suites


def suite_files(project: Project) -> dict[str, tuple[bytes, int]]:
    return {
        path.name: (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted((project.root / "suites").iterdir())
    }


def test_record_writes_every_kind_of_suite(recorded: Project) -> None:
    names = sorted(path.stem for path in (recorded.root / "suites").glob("*.json"))
    assert names == ["hard", "slice-class-0", "slice-class-1", "slice-class-2",
                     "slice-class-3", "whole-set", "wrong"]  # fmt: skip
    hard = recorded.suite("hard")
    assert hard["version"] == 2 and len(hard["examples"]) == 50
    losses = [example["loss"] for example in hard["examples"]]
    wrong = recorded.suite("wrong")["examples"]
    assert min(losses) >= max(
        e["loss"]
        for e in recorded.suite("slice-class-1")["examples"]
        if e["index"] not in {x["index"] for x in hard["examples"]}
    )
    assert all(example["score"] == 0.0 for example in wrong)


def test_checkpoint_trained_further_holds(recorded: Project, tmp_path: Path) -> None:
    further = recorded.train(50, tmp_path / "further.pt", recorded.checkpoint, seed=1)
    before = suite_files(recorded)
    ran = run_suites(recorded.root, "check", "--checkpoint", str(further))
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("suites check held")
    assert ran.json["passed"] is True
    assert suite_files(recorded) == before


def test_zeroed_class_fails_its_slice_and_lists_flips(
    recorded: Project, tmp_path: Path
) -> None:
    broken = suites_project.without_class(recorded.checkpoint, 2, tmp_path / "no2.pt")
    before = suite_files(recorded)
    ran = run_suites(recorded.root, "check", "--checkpoint", str(broken))
    assert ran.code == 1, ran.stdout + ran.stderr
    outcomes = {suite["name"]: suite for suite in ran.json["suites"]}
    regressed = sorted(name for name, s in outcomes.items() if s["regressed"])
    assert [name for name in regressed if name.startswith("slice-")] == [
        "slice-class-2"
    ]
    slice_2 = outcomes["slice-class-2"]
    assert not slice_2["global_shift"]
    assert len(slice_2["flips"]) >= 20
    # every right-to-wrong change is listed: the flips account for the whole drop
    net = len(slice_2["flips"]) - slice_2["fixed"]
    assert net == round(slice_2["drop"] * slice_2["size"])
    assert {flip["label"] for flip in slice_2["flips"]} == {2}
    assert all(flip["old_prediction"] == 2 != flip["new_prediction"]
               for flip in slice_2["flips"])  # fmt: skip
    shown = slice_2["flips"][0]
    assert f"slice-class-2: {len(slice_2['flips'])} example(s) flipped" in ran.stdout
    assert f"{shown['index']:>7}  2" in ran.stdout
    assert "not a global shift" in ran.stdout
    assert suite_files(recorded) == before


def test_reordered_dataset_is_detected_by_hashes(recorded_copy: Project) -> None:
    data = torch.load(recorded_copy.data, weights_only=True)
    order = torch.randperm(len(data["y"]), generator=torch.Generator().manual_seed(0))
    torch.save({"x": data["x"][order], "y": data["y"][order]}, recorded_copy.data)
    before = suite_files(recorded_copy)
    ran = run_suites(recorded_copy.root, "check")
    assert ran.code == 2, ran.stdout + ran.stderr
    assert "the dataset was reordered" in ran.stderr
    assert 'key "hash"' in ran.stderr and "suite 'hard'" in ran.stderr
    assert "content is now at #" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert suite_files(recorded_copy) == before


def test_edited_example_is_named(recorded_copy: Project) -> None:
    data = torch.load(recorded_copy.data, weights_only=True)
    hard = recorded_copy.suite("hard")["examples"][0]["index"]
    data["x"][hard] += 1.0
    torch.save(data, recorded_copy.data)
    ran = run_suites(recorded_copy.root, "check")
    assert ran.code == 2
    assert "the dataset's content changed" in ran.stderr
    assert f"#{hard}'s content hash was" in ran.stderr


def test_record_is_stable(recorded_copy: Project) -> None:
    """The same checkpoint recorded again changes no byte: the files diff cleanly."""
    before = {name: data for name, (data, _) in suite_files(recorded_copy).items()}
    ran = run_suites(recorded_copy.root, "record")
    assert ran.code == 0, ran.stderr
    after = {name: data for name, (data, _) in suite_files(recorded_copy).items()}
    assert after == before
    hard = json.loads(before["hard.json"])
    at = hard["columns"].index("index")
    indices = [row[at] for row in hard["examples"]]
    assert indices == sorted(indices) and len(indices) == 50
