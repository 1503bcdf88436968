"""init wires data-expectations only once a suite is recorded, and then into the
mlsmoke repo and ``ci: skip``; turning the gate on leaves it out too."""

from __future__ import annotations

import yaml

from mlsmoke.adopt import expectations_setup, wiring
from mlsmoke.adopt.candidates import Candidates
from mlsmoke.adopt.standard import standard_repos


def hooks_by_repo(text: str) -> dict[str, list[str]]:
    config = yaml.safe_load(text)
    return {r["repo"]: [h["id"] for h in r["hooks"]] for r in config["repos"]}


def test_the_hook_is_wired_only_when_turned_on():
    repos = standard_repos()
    text = wiring.wire("", "c.yaml", repos, wiring.gate_comment(Candidates()))
    text = wiring.turn_gate_on(text, "c.yaml", repos)
    assert "data-expectations" not in wiring.hook_ids(text, "c.yaml")
    assert "overfit-batch" in wiring.hook_ids(text, "c.yaml")

    on = expectations_setup.turn_on(text, "c.yaml", repos)
    mlsmoke = [ids for ids in hooks_by_repo(on).values() if "doctest" in ids][0]
    assert mlsmoke[-1] == "data-expectations"
    assert yaml.safe_load(on)["ci"]["skip"][-1] == "data-expectations"
    assert expectations_setup.turn_on(on, "c.yaml", repos) == on  # idempotent
