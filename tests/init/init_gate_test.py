"""``mlsmoke init --model --batch`` turns the gate on and shows it passing once; the
factories are found by reading the source, never importing it."""

from __future__ import annotations

import pytest
from adoption import PreCommit, adopt
from legacy_repo import write_legacy_repo

from mlsmoke.adopt.candidates import find, module_name

MODEL = "legacy_pkg.model:build_model"
BATCH = "legacy_pkg.data:example_batch"


@pytest.mark.e2e
def test_model_and_batch_turn_the_gate_on_and_it_passes(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = write_legacy_repo(tmp_path / "repo")
    adopted = adopt(repo, hook_repo, "--model", MODEL, "--batch", BATCH)
    assert "Running the gate once" in adopted.init_output
    assert "PASS" in adopted.init_output
    pyproject = (repo / "pyproject.toml").read_text()
    assert f'model = "{MODEL}"' in pyproject and f'batch = "{BATCH}"' in pyproject
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert "    -   id: overfit-batch\n" in config
    assert "# - id: overfit-batch" not in config
    gate = config.split("    -   id: overfit-batch\n", 1)[1].split("-   id:", 1)[0]
    assert "verbose: true" in gate  # a pass's warnings are shown at the commit
    # Once the gate passed, the data expectations are recorded and their hook is on.
    assert "expectations.json recorded; data-expectations is on" in adopted.init_output
    assert (repo / "expectations.json").is_file()
    assert "    -   id: data-expectations\n" in config
    assert "data-expectations]" in config  # in ci: skip
    assert "overfit-batch-ddp" not in config  # no distributed code: not offered
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "overfit one batch" in ran.stdout
    assert "data expectations" in ran.stdout


def test_candidates_are_found_without_importing_the_project(tmp_path):
    repo = write_legacy_repo(tmp_path)
    (repo / "src" / "legacy_pkg" / "boom.py").write_text(
        "raise SystemExit('imported!')\n"
        "def make_loader():\n    return DataLoader([])\n"
    )
    paths = [path.relative_to(repo).as_posix() for path in repo.rglob("*.py")]
    found = find(repo, paths)
    models = {candidate.spec: candidate.why for candidate in found.models}
    batches = {candidate.spec: candidate.why for candidate in found.batches}
    assert models == {
        "legacy_pkg.lit:Classifier": "class with training_step",
        "legacy_pkg.lit:build_classifier": "returns Classifier",
        MODEL: "returns Module",
        "legacy_pkg.model:Net": "class, built without arguments",
    }
    assert batches == {
        BATCH: "named as a batch",
        "legacy_pkg.boom:make_loader": "returns a DataLoader",
    }


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("src/pkg/model.py", "pkg.model"),
        ("pkg/__init__.py", "pkg"),
        ("tests/test_model.py", None),
        ("scripts/my-tool.py", None),
    ],
)
def test_module_names_follow_the_src_layout(path, module):
    assert module_name(path) == module
