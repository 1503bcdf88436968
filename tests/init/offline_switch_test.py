"""``--offline`` and ``--online`` on a config's text: pure functions, plain strings."""

from __future__ import annotations

import yaml

from mlsmoke.adopt.github_reach import first_reason
from mlsmoke.adopt.nothing_written import why_nothing
from mlsmoke.adopt.offline_switch import form, to_offline, to_online

ADOPTED = """\
# ours: keep me
repos:
  - repo: /src/mlsmoke
    rev: abc123
    hooks:
      - id: warm-worker
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v6.0.0
    hooks:
      - id: check-yaml
      - id: trailing-whitespace
        # mlsmoke baseline: files that failed this hook
        exclude: |
          (?x)^(
            NOTES\\.txt
          )$
  - repo: https://github.com/PyCQA/flake8
    rev: 7.5.0
    hooks:
      - id: flake8
        # Plugins: TorchFix's codes are turned on in .flake8.
        additional_dependencies: ["torchfix==0.7.0"]
        args: [--max-line-length=100]
  # our own hook
  - repo: local
    hooks:
      - id: no-fixme
        name: no FIXME
        language: pygrep
        entry: 'FIXME'
  - repo: https://github.com/PyCQA/isort
    rev: 5.13.2
    hooks:
      - id: isort
"""


def test_offline_then_online_gives_back_the_same_bytes():
    offline = to_offline(ADOPTED, "c.yaml", "/src/mlsmoke", "abc123")
    assert offline.converted == [
        "https://github.com/pre-commit/pre-commit-hooks",
        "https://github.com/PyCQA/flake8",
    ]
    repos = yaml.safe_load(offline.text)["repos"]
    flake8 = repos[2]["hooks"][0]
    assert repos[2]["repo"] == "local" and "rev" not in repos[2]
    assert flake8["additional_dependencies"] == ["flake8==7.5.0", "torchfix==0.7.0"]
    assert flake8["args"] == ["--max-line-length=100"]
    assert flake8["entry"] == "flake8" and flake8["language"] == "python"
    assert repos[1]["hooks"][1]["exclude"].startswith("(?x)")
    changed = ("github.com/pre-commit", "PyCQA/flake8", "v6.0.0", "7.5.0", "torchfix")
    for line in ADOPTED.splitlines():  # every other line is kept
        if not any(word in line for word in changed):
            assert line in offline.text.splitlines(), line
    assert form(offline.text, "c.yaml") == (0, 2)
    assert "isort" in offline.text  # not mlsmoke's: left as it is
    online = to_online(offline.text, "c.yaml")
    assert online.text == ADOPTED
    assert form(online.text, "c.yaml") == (2, 0)


def test_mlsmokes_repo_from_a_url_moves_to_the_local_clone():
    text = ADOPTED.replace("/src/mlsmoke", "https://github.com/x/mlsmoke", 1)
    offline = to_offline(text, "c.yaml", "/src/mlsmoke", "def456")
    assert yaml.safe_load(offline.text)["repos"][0] == {
        "repo": "/src/mlsmoke",
        "rev": "def456",
        "hooks": [{"id": "warm-worker"}],
    }


def test_a_hook_without_an_offline_form_keeps_its_repo_and_says_why():
    text = ADOPTED.replace("- id: check-yaml", "- id: check-json")
    offline = to_offline(text, "c.yaml", "/src/mlsmoke", "abc123")
    assert "https://github.com/pre-commit/pre-commit-hooks" in offline.text
    assert offline.kept == [
        "https://github.com/pre-commit/pre-commit-hooks: no offline form for hook"
        " check-json; it still needs GitHub"
    ]


def test_a_run_that_writes_nothing_says_why_and_what_would():
    said = why_nothing(5, 0, False, False, False)
    assert said.startswith("nothing: already adopted (every hook is wired")
    assert "`--offline` turns its 5 GitHub hook repos" in said and "--force" in said
    said = why_nothing(0, 4, True, False, True)
    assert "already offline" in said and "`--online`" in said
    assert "--force" not in said


def test_gits_reason_is_its_first_line_without_fatal():
    assert (
        first_reason("fatal: unable to access 'x': Could not resolve host\n")
        == "unable to access 'x': Could not resolve host"
    )
