"""``mlsmoke init`` in repositories shaped like the ones people adopt it in: a
nanoGPT-style model with no training script (the stand-in mlsmoke_gate.py; a script
repository gets script mode, init_script_mode_test.py), a library whose classes all
take required arguments, and a config whose hook has its own ``exclude:``. In each,
real pre-commit passes right after init, and the gate is on only if it passed."""

from __future__ import annotations

import re

import pytest
import yaml
from adoption import PreCommit, adopt, mlsmoke
from legacy_repo import PRE_COMMIT_CONFIG, write_legacy_repo
from script_repo import finish_library_gate, write_library_repo, write_script_repo

from gitrepo import commit_all
from mlsmoke.adopt.gate_module import FILENAME

pytestmark = pytest.mark.e2e


def gate_is_on(config_text: str) -> bool:
    config = yaml.safe_load(config_text)
    return any(
        hook["id"] == "overfit-batch"
        for repo in config["repos"]
        for hook in repo["hooks"]
    )


def test_a_model_without_a_script_gets_a_stand_in_that_passed_and_blocks_a_low_lr(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = write_script_repo(tmp_path / "gpt", train=False)
    adopted = adopt(repo, hook_repo)
    assert "the gate passed; overfit-batch is on" in adopted.init_output
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert gate_is_on(config) and "uncomment" not in config
    gate = (repo / FILENAME).read_text()
    assert "GPT(GPTConfig(" in gate and "configure_optimizers(" in gate
    assert "train" not in re.findall(r"^from (\w+)", gate, re.MULTILINE)
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"overfit one batch\.+Passed", ran.stdout), ran.stdout

    model = repo / "model.py"
    model.write_text(model.read_text().replace("lr=learning_rate", "lr=6e-7"))
    line = next(
        n for n, text in enumerate(model.read_text().splitlines(), 1) if "6e-7" in text
    )
    commit_all(repo, "a typo in the recipe")
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 1, ran.stdout
    assert "FAIL lr-too-low" in ran.stdout
    assert f"model.py:{line} in configure_optimizers" in ran.stdout


def test_a_library_of_required_arguments_keeps_the_gate_off_until_it_passes(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = write_library_repo(tmp_path / "lib")
    adopted = adopt(repo, hook_repo)
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert not gate_is_on(config)
    # A stand-in that can only raise its NotImplementedError is not run.
    assert "it runs once its 2 TODOs are done" in adopted.init_output
    assert "Running the gate once" not in adopted.init_output
    assert "# Off: its first run failed" not in config
    assert "# TODO mlsmoke_gate.model: build TransformerWrapper(" in config
    assert "# - id: overfit-batch" in config
    gate = (repo / FILENAME).read_text()
    assert "TransformerWrapper(num_tokens, max_seq_len, dim, depth)" in gate
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr

    # The user finishes mlsmoke_gate.py; init, run again, turns the gate on.
    finish_library_gate(repo)
    commit_all(repo, "finish the gate's factories")
    again = mlsmoke(repo, "init")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "the gate passed; overfit-batch is on" in again.stdout
    assert gate_is_on((repo / ".pre-commit-config.yaml").read_text())


def test_a_hook_with_its_own_exclude_is_baselined_by_extending_it(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = write_legacy_repo(tmp_path / "repo")
    own = PRE_COMMIT_CONFIG.replace(
        "    -   id: check-yaml   # our CI configs\n",
        "    -   id: check-yaml   # our CI configs\n"
        "    -   id: trailing-whitespace\n"
        "        exclude: ^vendor/\n",
    )
    (repo / ".pre-commit-config.yaml").write_text(own)
    (repo / "vendor").mkdir()
    (repo / "vendor" / "upstream.txt").write_text("theirs   \n")
    adopted = adopt(repo, hook_repo, "--no-gate")
    config = (repo / ".pre-commit-config.yaml").read_text()
    hook = next(
        h
        for r in yaml.safe_load(config)["repos"]
        for h in r["hooks"]
        if h["id"] == "trailing-whitespace"
    )
    assert re.search(hook["exclude"], "vendor/upstream.txt")  # theirs, kept
    assert re.search(hook["exclude"], "NOTES.txt")  # the baseline
    assert not re.search(hook["exclude"], "src/legacy_pkg/model.py")
    assert "vendor/upstream.txt" not in adopted.init_output  # not counted as debt
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
