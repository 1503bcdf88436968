"""Model or data: labels flipped on purpose in 2% of the evaluation set show up as
possible label issues among the hard examples, measured against the flips."""

from __future__ import annotations

from pathlib import Path

import torch

from suites_cli import make_project, run_suites

SIZE, FLIPPED = 1000, 20  # 2%
CLASSES = 4


def test_flipped_labels_are_hinted_among_the_hard_examples(tmp_path: Path) -> None:
    project = make_project(tmp_path / "flipped")
    data = torch.load(project.data, weights_only=True)
    generator = torch.Generator().manual_seed(3)
    flipped = torch.randperm(SIZE, generator=generator)[:FLIPPED]
    shift = torch.randint(1, CLASSES, (FLIPPED,), generator=generator)
    data["y"][flipped] = (data["y"][flipped] + shift) % CLASSES
    torch.save(data, project.data)
    project.train(300)  # on a training set of its own: out-of-sample probabilities

    ran = run_suites(project.root, "record")

    assert ran.code == 0, ran.stderr
    flips = set(flipped.tolist())
    hinted = {issue["index"] for issue in ran.json["label_issues"]}
    hard = {example["index"] for example in project.suite("hard")["examples"]}
    assert hinted <= hard
    precision = len(hinted & flips) / max(len(hinted), 1)
    recall = len(hinted & flips) / len(flips)
    print(f"label-issue hints: {len(hinted)} among {len(hard)} hard examples;"
          f" precision {precision:.2f}, recall {recall:.2f} against {len(flips)}"
          " flipped labels")  # fmt: skip
    assert recall >= 0.9
    assert precision >= 0.8
    assert "possible label issues among the 50 hard examples" in ran.stdout
    in_file = [e for e in project.suite("hard")["examples"]
               if e["possible_label_issue"] is not None]  # fmt: skip
    assert {e["index"] for e in in_file} == hinted


def test_clean_labels_give_few_hints(tmp_path: Path) -> None:
    project = make_project(tmp_path / "clean")
    project.train(300)
    ran = run_suites(project.root, "record")
    assert ran.code == 0, ran.stderr
    assert len(ran.json["label_issues"]) <= 5
