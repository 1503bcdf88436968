"""``mlsmoke new DIR``: generation, bad input, a missing cookiecutter, and the template
found from an installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from baking import TEMPLATE

import mlsmoke
from mlsmoke import cli, new
from mlsmoke.errors import EnvironmentProblem
from mlsmoke.install_hint import install_hint


def run_new(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["new", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_new_generates_the_project_named_after_dir(tmp_path: Path, capsys) -> None:
    code, out, _ = run_new(capsys, str(tmp_path / "tiny-gpt"), "--no-input")
    project = tmp_path / "tiny-gpt"
    assert code == 0
    assert (project / "src" / "tiny_gpt" / "model.py").is_file()
    with (project / "pyproject.toml").open("rb") as file:
        assert tomllib.load(file)["project"]["name"] == "tiny-gpt"
    assert "# Tiny Gpt" in (project / "README.md").read_text()
    assert f"Created {project}" in out
    assert "pre-commit install" in out


def test_set_answers_a_question(tmp_path: Path, capsys) -> None:
    code, _, _ = run_new(
        capsys, str(tmp_path / "proj"), "--set", "package_name=net", "--no-input"
    )
    assert code == 0
    assert (tmp_path / "proj" / "src" / "net" / "data.py").is_file()


def test_an_existing_empty_dir_is_used(tmp_path: Path, capsys) -> None:
    (tmp_path / "proj").mkdir()
    assert run_new(capsys, str(tmp_path / "proj"), "--no-input")[0] == 0
    assert (tmp_path / "proj" / "train.py").is_file()


def test_dot_generates_into_the_current_empty_dir(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here-it-is").mkdir()
    monkeypatch.chdir(tmp_path / "here-it-is")
    assert run_new(capsys, ".", "--no-input")[0] == 0
    assert (tmp_path / "here-it-is" / "src" / "here_it_is" / "model.py").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "package_name"], "--set 'package_name': expected KEY=VALUE"),
        (["--set", "=x"], "--set '=x': expected KEY=VALUE"),
        (["--set", "project_slug=other"], "the slug is the name of DIR ('proj')"),
        (
            ["--set", "pakage_name=net"],
            "--set pakage_name=...: the template has no question 'pakage_name'; "
            "it asks: project_name, project_slug, package_name,",
        ),
    ],
)
def test_bad_answers_exit_2_naming_the_option(
    tmp_path: Path, capsys, argv: list[str], message: str
) -> None:
    code, _, err = run_new(capsys, str(tmp_path / "proj"), "--no-input", *argv)
    assert code == 2
    assert message in err
    assert not (tmp_path / "proj").exists()


def test_a_non_empty_dir_is_left_alone(tmp_path: Path, capsys) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "notes.txt").write_text("keep me")
    code, _, err = run_new(capsys, str(tmp_path / "proj"), "--no-input")
    assert code == 2
    assert "already exists and is not empty" in err
    assert os.listdir(tmp_path / "proj") == ["notes.txt"]


def test_a_file_in_the_way_is_named(tmp_path: Path, capsys) -> None:
    (tmp_path / "proj").write_text("keep me")
    code, _, err = run_new(capsys, str(tmp_path / "proj"), "--no-input")
    assert code == 2
    assert f"{tmp_path / 'proj'}: already exists and is not a directory" in err
    assert (tmp_path / "proj").read_text() == "keep me"


def test_an_invalid_project_name_is_rejected_by_the_template(
    tmp_path: Path, capfd
) -> None:
    code = cli.main(["new", str(tmp_path / "My Project"), "--no-input"])
    err = capfd.readouterr().err
    assert code == 2
    assert "project_slug 'My Project' must be lowercase" in err
    assert "the template rejected these answers" in err
    assert "Traceback" not in err
    assert not (tmp_path / "My Project").exists()


@pytest.mark.parametrize(
    ("name", "code"), [("tidy", 0), ("Not A Slug", 2)], ids=["generated", "rejected"]
)
def test_new_leaves_no_temporary_file(tmp_path: Path, name: str, code: int) -> None:
    """cookiecutter writes the rendered hook, answers included, to a temporary file it
    never deletes; mlsmoke new must not leave it (nor anything else) in TMPDIR."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    completed = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "new", str(tmp_path / name), "--no-input"],
        env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
    )
    assert completed.returncode == code, completed.stderr
    assert "Traceback" not in completed.stderr
    assert list(scratch.iterdir()) == []


def test_missing_cookiecutter_is_a_clear_exit_2(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cookiecutter", None)
    monkeypatch.setitem(sys.modules, "cookiecutter.main", None)
    code, _, err = run_new(capsys, str(tmp_path / "proj"), "--no-input")
    assert code == 2
    assert install_hint("template") in err  # where this mlsmoke came from
    assert "pip install -e '" in err  # the suite runs from the checkout


def test_find_template_takes_the_first_candidate_holding_one(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert new.find_template([empty, TEMPLATE]) == TEMPLATE


def test_no_template_anywhere_points_at_the_repository(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as raised:
        new.find_template([tmp_path / "a", tmp_path / "b"])
    assert (
        "cookiecutter https://github.com/mlsmoke/mlsmoke --directory "
        f"templates/ml-project --checkout v{mlsmoke.__version__}"
    ) in str(raised.value)


@pytest.mark.e2e
def test_an_installed_wheel_ships_the_template(hook_repo, tmp_path: Path) -> None:
    """Build mlsmoke's wheel, install it into a bare directory, and generate from it."""
    pip = [sys.executable, "-m", "pip", "--quiet"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path, "."],
        cwd=hook_repo.path,
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("mlsmoke-*.whl")
    shipped = {
        name.removeprefix("mlsmoke/template/")
        for name in zipfile.ZipFile(wheel).namelist()
        if name.startswith("mlsmoke/template/")
    }
    in_checkout = {
        path.relative_to(TEMPLATE).as_posix()
        for path in TEMPLATE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert shipped == in_checkout

    site = tmp_path / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", site, wheel],
        check=True,
        capture_output=True,
    )
    completed = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "new", tmp_path / "from-wheel", "--no-input"]
        + ["--hooks-repo", hook_repo.path, "--hooks-rev", hook_repo.rev],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    project = tmp_path / "from-wheel"
    assert (project / "scripts" / "train.sh").stat().st_mode & 0o111
    config = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    assert config["repos"][-1]["rev"] == hook_repo.rev
    assert not list(project.rglob("__pycache__")), "bytecode from the wheel's template"
    assert (site / "mlsmoke" / "template").rglob("__pycache__")
    without = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "new", tmp_path / "no-source", "--no-input"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    assert without.returncode == 2
    assert "pass --hooks-repo URL_OR_PATH --hooks-rev REV" in without.stderr
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import mlsmoke.new; print(mlsmoke.new.find_template())",
        ],
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where) == site / "mlsmoke" / "template"


def test_new_offline_prints_no_url_and_names_where_torch_comes_from(
    hook_repo, tmp_path: Path
) -> None:
    source = ["--hooks-repo", str(hook_repo.path), "--hooks-rev", hook_repo.rev]
    quiet = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    quiet["PIP_CONFIG_FILE"] = os.devnull  # no pip configuration file is read
    cases = {
        "configured": {**quiet, "PIP_FIND_LINKS": str(tmp_path / "wheels")},
        "bare": quiet,
    }
    printed = {}
    for name, env in cases.items():
        completed = subprocess.run(
            [sys.executable, "-m", "mlsmoke", "new", str(tmp_path / name)]
            + ["--no-input", "--offline", *source],
            env=env,
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 0, completed.stderr
        assert "://" not in completed.stdout, completed.stdout
        printed[name] = completed.stdout
    assert "# from your pip configuration: PIP_FIND_LINKS" in printed["configured"]
    assert "--no-index --find-links WHEELS" in printed["bare"]  # a venv's mlsmoke


def test_new_offline_writes_local_hooks_and_mlsmoke_from_the_clone(
    hook_repo, tmp_path: Path, capsys
) -> None:
    source = ["--hooks-repo", str(hook_repo.path), "--hooks-rev", hook_repo.rev]
    code, out, err = run_new(
        capsys, str(tmp_path / "air-gapped"), "--no-input", "--offline", *source
    )
    assert code == 0, err
    project = tmp_path / "air-gapped"
    config = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    assert [repo["repo"] for repo in config["repos"]] == [
        str(hook_repo.path),
        *["local"] * 3,  # black, flake8, shellcheck
        str(hook_repo.path),
    ]
    assert config["repos"][-1]["rev"] == hook_repo.rev
    assert config["ci"]["skip"] == [
        "warm-worker",
        "doctest",
        "overfit-batch",
        "data-expectations",
        "overfit-batch-ddp",
    ]
    dev = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    assert f"mlsmoke @ git+file://localhost{hook_repo.path}@{hook_repo.rev}" in (
        dev["optional-dependencies"]["dev"]
    )


def test_the_templates_offline_answer_needs_a_local_clone(tmp_path: Path) -> None:
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    with pytest.raises(FailedHookException):
        cookiecutter(
            str(TEMPLATE),
            no_input=True,
            extra_context={"offline_hooks": "yes"},
            output_dir=str(tmp_path),
        )


def test_a_hooks_rev_that_does_not_exist_is_refused(
    hook_repo, tmp_path: Path, capsys
) -> None:
    source = ["--hooks-repo", str(hook_repo.path), "--hooks-rev", "v99.9.9"]
    code, _, err = run_new(capsys, str(tmp_path / "p"), "--no-input", *source)
    assert code == 2
    assert "--hooks-rev v99.9.9: no such commit" in err
    assert not (tmp_path / "p").exists()
