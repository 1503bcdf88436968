"""The config editors: comments, order and line endings kept; idempotent; a baseline
written then removed leaves the file as it was; bad input names its line."""

from __future__ import annotations

import re

import pytest
import yaml

from mlsmoke.adopt import flake8_config, hook_baseline, precommit_edit, wiring
from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.candidates import Candidates
from mlsmoke.adopt.standard import CI_SKIP, standard_repos
from mlsmoke.adopt.textfile import read_text, write_text
from mlsmoke.errors import ConfigError

COMMENTED = """\
# header comment
default_stages: [pre-commit]   # inline
repos:
  # the team's own check
  - repo: local
    hooks:
      - id: mine   # keep
        name: mine
        entry: 'x'
        language: pygrep
  # trailing comment
"""


def wired(text: str) -> str:
    return wiring.wire(
        text, "c.yaml", standard_repos(), wiring.gate_comment(Candidates())
    )


def is_subsequence(small: list[str], big: list[str]) -> bool:
    remaining = iter(big)
    return all(line in remaining for line in small)


def test_wiring_keeps_every_line_in_order_and_adds_every_hook():
    text = wired(COMMENTED)
    assert is_subsequence(COMMENTED.splitlines(), text.splitlines())
    ids = wiring.hook_ids(text, "c.yaml")
    for hook in ("black", "flake8", "shellcheck", "bash-strict-mode", "doctest"):
        assert hook in ids
    assert "overfit-batch" not in ids and "# - id: overfit-batch" in text
    assert "skip: [warm-worker, doctest, overfit-batch]" in text


def test_a_gate_that_passed_replaces_its_comment_with_the_hook():
    text = wired(COMMENTED)
    on = wiring.turn_gate_on(text, "c.yaml", standard_repos())
    assert "overfit-batch" in wiring.hook_ids(on, "c.yaml")
    assert wiring.GATE_FIRST_LINE not in on and "uncomment" not in on
    assert "# - id: overfit-batch" not in on
    assert is_subsequence(COMMENTED.splitlines(), on.splitlines())
    assert wiring.turn_gate_on(on, "c.yaml", standard_repos()) == on


def test_a_gate_that_failed_keeps_its_comment_with_the_reason():
    text = wired(COMMENTED)
    reason = ["Off: its first run failed: lr-too-low: the learning rate 6e-07"]
    off = wiring.replace_gate_comment(
        text, wiring.gate_comment(Candidates(), reason, configured=True)
    )
    assert "overfit-batch" not in wiring.hook_ids(off, "c.yaml")
    assert "# Off: its first run failed: lr-too-low" in off
    assert off.count("# - id: overfit-batch") == 1
    assert off.count(wiring.GATE_FIRST_LINE) == 1
    assert "mlsmoke init --model" not in off  # the configured gate's own advice


def test_wiring_twice_changes_nothing():
    once = wired(COMMENTED)
    assert wired(once) == once


def test_new_hooks_join_an_existing_repo_in_its_indentation():
    text = (
        "repos:\n-   repo: https://github.com/pre-commit/pre-commit-hooks\n"
        "    rev: v5.0.0\n    hooks:\n    -   id: check-yaml\n"
    )
    (repo,) = [r for r in standard_repos() if r.url.endswith("/pre-commit-hooks")]
    edited = precommit_edit.add_hooks(text, "c.yaml", repo)
    assert "    rev: v5.0.0\n" in edited  # the team's rev stays
    assert "    -   id: end-of-file-fixer\n" in edited
    assert edited.count("id: check-yaml") == 1


@pytest.mark.parametrize(
    ("ci", "expected"),
    [
        (
            "ci:\n  autofix_prs: false\n",
            "  skip: [warm-worker, doctest, overfit-batch]",
        ),
        (
            "ci:\n  skip: [mypy]\n",
            "  skip: [mypy, warm-worker, doctest, overfit-batch]",
        ),
        (
            "ci:\n  skip:\n    - mypy\n",
            "    - mypy\n    - warm-worker\n    - doctest\n    - overfit-batch",
        ),
    ],
)
def test_ci_skip_is_completed_not_replaced(ci: str, expected: str):
    text = precommit_edit.ensure_ci_skip("repos: []\n" + ci, "c.yaml", CI_SKIP)
    assert expected in text
    assert precommit_edit.ensure_ci_skip(text, "c.yaml", CI_SKIP) == text


def test_bad_yaml_names_its_line():
    with pytest.raises(ConfigError, match=r"c.yaml:3: not valid YAML"):
        wired("repos:\n  - repo: local\n    rev: a: b\n")


@pytest.mark.parametrize("paths", [["scripts/a b.sh", "x+y/c.sh"], ["one.sh"]])
def test_hook_baseline_round_trips_and_removal_restores_the_file(paths):
    text = wired(COMMENTED)
    with_baseline = hook_baseline.write(text, "c.yaml", "shellcheck", paths)
    assert hook_baseline.read(with_baseline, "c.yaml", "shellcheck") == sorted(paths)
    assert hook_baseline.write(with_baseline, "c.yaml", "shellcheck", []) == text


OWN_EXCLUDE = "repos:\n- repo: local\n  hooks:\n  - id: shellcheck\n    exclude: {}\n"


@pytest.mark.parametrize(
    ("own", "excluded", "kept"),
    [
        ("^vendor/", ["vendor/x.sh"], ["a/vendor/x.sh", "c.sh"]),
        ("'^my scripts/#old'", ["my scripts/#old.sh"], ["my scripts/new.sh"]),
        ("'(?i)^VENDOR/'", ["vendor/x.sh"], ["c.sh"]),
        (
            "|\n      (?x)^(\n        gen/.*|  # generated\n        x\\.sh\n      )$",
            ["gen/a.sh", "x.sh"],
            ["xysh", "c.sh"],
        ),
    ],
)
def test_a_hooks_own_exclude_is_extended_by_the_baseline(own, excluded, kept):
    text = OWN_EXCLUDE.format(own)
    assert hook_baseline.read(text, "c.yaml", "shellcheck") is None
    assert hook_baseline.write(text, "c.yaml", "shellcheck", []) == text
    written = hook_baseline.write(text, "c.yaml", "shellcheck", ["a b.sh", "d.sh"])
    assert "# mlsmoke baseline" in written and "hook's own exclude" in written
    assert hook_baseline.read(written, "c.yaml", "shellcheck") == ["a b.sh", "d.sh"]
    regex = yaml.safe_load(written)["repos"][0]["hooks"][0]["exclude"]
    for path in [*excluded, "a b.sh", "d.sh"]:
        assert re.search(regex, path), path
    for path in kept:
        assert not re.search(regex, path), path
    own_regex = hook_baseline.own_exclude(written, "c.yaml", "shellcheck")
    assert [bool(re.search(own_regex, p)) for p in excluded + ["a b.sh"]] == [
        *[True] * len(excluded),
        False,
    ]
    shrunk = hook_baseline.write(written, "c.yaml", "shellcheck", ["d.sh"])
    assert hook_baseline.read(shrunk, "c.yaml", "shellcheck") == ["d.sh"]
    emptied = hook_baseline.write(shrunk, "c.yaml", "shellcheck", [])
    assert "mlsmoke baseline" not in emptied
    regex = yaml.safe_load(emptied)["repos"][0]["hooks"][0]["exclude"]
    assert all(re.search(regex, p) for p in excluded)
    assert not any(re.search(regex, p) for p in [*kept, "d.sh"])


SETUP_CFG = """\
[metadata]
name = x

[flake8]
# the team's comment
max-line-length = 100
per-file-ignores =
    tests/*:S101
exclude = build

[isort]
profile = black
"""


def test_flake8_baseline_follows_the_teams_entries_and_round_trips():
    baseline = {"src/a.py": ["E501", "F401"], "b.py": ["W291"]}
    text = flake8_config.write_baseline(SETUP_CFG, baseline)
    own, read = flake8_config.split_per_file(text)
    assert own == ["tests/*:S101"] and read == baseline
    settings = flake8_config.settings(text, "setup.cfg")
    assert settings["max-line-length"] == "100"  # the team's value stays
    assert settings["extend-ignore"] == "E203,E701"  # black's, added
    assert "src/a.py:E501,F401" in settings["per-file-ignores"]
    assert flake8_config.write_baseline(text, baseline) == text
    cleared = flake8_config.write_baseline(text, {})
    assert flake8_config.split_per_file(cleared) == (["tests/*:S101"], {})
    assert cleared == flake8_config.write_baseline(SETUP_CFG, {})


PYPROJECT = """\
[project]
name = "x"

[tool.mlsmoke.strict-mode]
# vendored code is not ours
exclude = ["vendor/**"]

[tool.black]
line-length = 100
"""


def test_toml_array_keeps_the_teams_entries_and_round_trips():
    block = toml.array_block("exclude", ["vendor/**"], ["/old.sh"], "files")
    text = toml.set_key(PYPROJECT, "p", "tool.mlsmoke.strict-mode", "exclude", block)
    assert toml.split_array(text, "tool.mlsmoke.strict-mode", "exclude") == (
        ["vendor/**"],
        ["/old.sh"],
    )
    assert "# vendored code is not ours" in text and "line-length = 100" in text
    data = toml.parse(text, "p")
    assert data["tool"]["mlsmoke"]["strict-mode"]["exclude"] == ["vendor/**", "/old.sh"]


@pytest.mark.parametrize("after", ["", "\n[tool.isort]\nprofile = 'black'\n"])
def test_a_table_left_empty_by_a_removed_baseline_goes_with_it(after: str):
    block = toml.array_block("exclude", [], ["a.md"], "files")
    table = "\n".join(["", "[tool.mlsmoke.doctest]", *block, ""])
    text = PYPROJECT + table + after
    removed = toml.set_key(text, "p", "tool.mlsmoke.doctest", "exclude", [])
    assert removed == PYPROJECT + after
    kept = toml.set_key(
        PYPROJECT, "p", "tool.black", "force-exclude", ["force-exclude = 'x'"]
    )
    removed = toml.set_key(kept, "p", "tool.black", "force-exclude", [])
    assert removed == PYPROJECT  # line-length stays, and so does [tool.black]


def test_toml_new_table_goes_at_the_end_and_inline_tables_are_refused():
    text = toml.set_key(
        PYPROJECT, "p", "tool.mlsmoke.doctest", "exclude", ['exclude = ["a.md"]']
    )
    assert text.startswith(PYPROJECT) and text.endswith('exclude = ["a.md"]\n')
    inline = '[tool.mlsmoke]\ndoctest = { exclude = ["x"] }\n'
    with pytest.raises(ConfigError, match="inline or as dotted keys"):
        toml.set_key(inline, "p", "tool.mlsmoke.doctest", "exclude", ["exclude = []"])


def test_crlf_files_are_written_back_in_crlf(tmp_path):
    path = tmp_path / "setup.cfg"
    path.write_bytes(SETUP_CFG.replace("\n", "\r\n").encode())
    path.chmod(0o640)
    file = read_text(path)
    file.text = flake8_config.write_baseline(file.text, {"a.py": ["F401"]})
    write_text(file)
    data = path.read_bytes()
    assert b"a.py:F401\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_strict_mode_baseline_entry_excludes_that_file_only():
    """Baselined as ``/run.sh``: the root's run.sh, not a new sub/run.sh."""
    from pathlib import PurePosixPath

    from mlsmoke.strict_mode.settings import is_excluded

    assert is_excluded(PurePosixPath("run.sh"), ("/run.sh",))
    assert not is_excluded(PurePosixPath("sub/run.sh"), ("/run.sh",))
    assert is_excluded(PurePosixPath("sub/run.sh"), ("run.sh",))  # names still match


@pytest.mark.parametrize("start", ["", "repos: []\n", "# a comment\n", "repos:\n"])
def test_an_empty_or_bare_config_gets_every_repo(start: str):
    text = wired(start)
    ids = wiring.hook_ids(text, "c.yaml")
    assert len(ids) == 15 and ids[0] == "warm-worker"  # the template's, its gates aside
    assert wired(text) == text


def test_warm_worker_goes_first_and_the_other_hooks_of_its_repo_last():
    existing = (
        "repos:\n  - repo: https://github.com/psf/black-pre-commit-mirror\n"
        "    rev: 26.10.1\n    hooks:\n      - id: black\n"
    )
    text = wired(existing)
    ids = wiring.hook_ids(text, "c.yaml")
    assert ids[0] == "warm-worker"
    assert ids.index("black") < ids.index("doctest")
    mlsmoke = [r for r in standard_repos() if r.runs_first][0].url
    assert text.count(f"- repo: {mlsmoke}") == 2
    assert wired(text) == text
