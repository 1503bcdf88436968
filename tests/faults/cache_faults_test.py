"""Cache faults through the real CLI in a real subprocess: broken entries, a cache that
cannot be written, concurrent gates, and files the watch list forgets. A fault costs
the shortcut or says so; it never passes a gate that did not run on this code."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from .cache_fault_project import (
    LIMIT,
    cache_entries,
    leftovers,
    make_project,
    mount_tmpfs,
    run,
    run_together,
    unmount,
)
from .faultkit import assert_clean, run_cli

PASSED = "overfit default: PASS memorized"
CACHED = "overfit default: PASS memorized (cached)"


@pytest.fixture
def project(tmp_path):
    root = make_project(tmp_path / "project")
    first = run(root, "overfit")
    assert first.code == 0 and PASSED in first.stdout and CACHED not in first.stdout
    assert len(cache_entries(root)) == 1
    return root


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # a writer cut off mid-entry
        lambda text: text.replace('"memorized"', '"memorized"}', 1),
    ],
    ids=["truncated", "garbled"],  # more shapes of garbage: cache_test.py
)
def test_a_broken_entry_is_a_miss_and_is_replaced(project, damage):
    (entry,) = cache_entries(project)
    entry.write_text(damage(entry.read_text()), errors="surrogateescape")
    again = run(project, "overfit")
    assert again.code == 0 and PASSED in again.stdout and CACHED not in again.stdout
    assert CACHED in run(project, "overfit").stdout  # rewritten whole
    assert leftovers(project) == []


def test_a_model_file_outside_watch_still_invalidates_the_pass(tmp_path):
    root = make_project(tmp_path / "project", watch='["pyproject.toml"]')
    assert run(root, "overfit").code == 0
    assert CACHED in run(root, "overfit").stdout
    with (root / "overfit_models.py").open("a") as file:
        file.write("\n# an edit the watch list does not cover\n")
    again = run(root, "overfit")
    assert again.code == 0 and CACHED not in again.stdout
    assert CACHED in run(root, "overfit").stdout


def test_a_bug_added_outside_watch_fails_instead_of_passing_cached(tmp_path):
    root = make_project(tmp_path / "project", watch='"pyproject.toml"')
    assert run(root, "overfit").code == 0
    models = root / "overfit_models.py"
    models.write_text(
        models.read_text().replace("torch.arange(16) % 4", "torch.arange(16) % 4 + 4")
    )  # labels out of range: the model no longer trains
    broken = run(root, "overfit")
    assert (
        broken.code == 1 and "FAIL" in broken.stdout and "(cached)" not in broken.stdout
    )


def test_a_file_edited_while_the_gate_runs_is_not_trusted_afterwards(tmp_path):
    root = make_project(tmp_path / "project", watch='["pyproject.toml"]')
    (root / "editing.py").write_text(
        "from pathlib import Path\n\n"
        "from overfit_models import MLP\n\n\n"
        "def build():\n"
        "    model = MLP()\n"
        "    with Path(__file__).with_name('overfit_models.py').open('a') as file:\n"
        "        file.write('# a commit lands while the gate runs\\n')\n"
        "    return model\n"
    )
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("overfit_models:MLP",
                                                       "editing:build"))  # fmt: skip
    assert run(root, "overfit").code == 0
    assert cache_entries(root) == []  # it ran the old code: not stored


def test_two_gates_at_once_share_one_valid_cache(tmp_path):
    root = make_project(tmp_path / "project")
    outcomes = run_together(root, 2, "overfit")
    assert [o.code for o in outcomes] == [0, 0]
    assert all(PASSED in o.stdout for o in outcomes)
    assert len(cache_entries(root)) == 1 and leftovers(root) == []
    assert CACHED in run(root, "overfit").stdout


def test_a_directory_in_watch_covers_every_file_under_it(tmp_path):
    root = make_project(tmp_path / "project", watch='["data", "pyproject.toml"]')
    (root / "data" / "labels").mkdir(parents=True)
    (root / "data" / "labels" / "classes.txt").write_text("a b c d\n")
    assert run(root, "overfit").code == 0
    assert CACHED in run(root, "overfit").stdout
    (root / "data" / "labels" / "classes.txt").write_text("a b c d e\n")
    assert CACHED not in run(root, "overfit").stdout


@pytest.mark.parametrize("watch", ['["src"]', '"src"', '["**/*.pyx"]'])
def test_a_watch_entry_that_matches_nothing_is_a_config_error(tmp_path, watch):
    root = make_project(tmp_path / "project", watch=watch)
    outcome = run(root, "overfit")
    entry = watch.strip('[]"')
    assert outcome.code == 2 and outcome.stdout == ""
    assert outcome.stderr.startswith(
        f"mlsmoke overfit: tool.mlsmoke.overfit.watch: {entry!r} matches no file in"
    )
    assert cache_entries(root) == []


@pytest.fixture
def mounted(tmp_path):
    mounts = []

    def mount(target, options):
        if not mount_tmpfs(target, options):
            return False
        mounts.append(target)
        return True

    yield mount
    for target in mounts:
        unmount(target)


def test_a_read_only_cache_runs_the_gate_and_says_it_is_not_cached(tmp_path, mounted):
    root = make_project(tmp_path / "project")
    cache = root / ".mlsmoke"
    if not mounted(cache, "ro,size=64k"):
        if os.geteuid() == 0:
            pytest.skip("cannot mount a read-only tmpfs here")
        cache.chmod(0o555)
    for _ in range(2):  # never served from a cache it could not write
        outcome = run(root, "overfit")
        assert (
            outcome.code == 0
            and PASSED in outcome.stdout
            and CACHED not in outcome.stdout
        )
        assert "overfit: the pass is not cached: " in outcome.stderr
        assert outcome.stderr.rstrip().endswith(
            ("Read-only file system", "Permission denied")
        )
    assert leftovers(root) == []


def test_a_full_disk_runs_the_gate_and_leaves_no_partial_entry(tmp_path, mounted):
    root = make_project(tmp_path / "project")
    cache = root / ".mlsmoke"
    if not mounted(cache, "size=16k"):
        pytest.skip("cannot mount a small tmpfs here (the unit tests patch the write)")
    (cache / "overfit").mkdir()
    (cache / ".gitignore").write_text("*\n")
    filler = cache / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(descriptor, b"x" * 1024):
            pass
    except OSError:
        pass  # the disk is full
    finally:
        os.close(descriptor)
    outcome = run(root, "overfit")
    assert outcome.code == 0 and PASSED in outcome.stdout
    assert "overfit: the pass is not cached: " in outcome.stderr
    assert "No space left on device" in outcome.stderr
    assert cache_entries(root) == [] and leftovers(root) == []
    filler.unlink()
    assert run(root, "overfit").code == 0 and len(cache_entries(root)) == 1


def test_an_edit_in_a_package_linked_into_the_project_is_not_served_cached(tmp_path):
    # A monorepo's layout: the model package is a symlink git lists as one file.
    root, shared = tmp_path / "project", tmp_path / "shared"
    make_project(root)
    shared.mkdir()
    (shared / "__init__.py").write_text("")
    (root / "overfit_models.py").rename(shared / "overfit_models.py")
    (root / "models").symlink_to(shared, target_is_directory=True)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('"overfit_models:', '"models.overfit_models:')
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    assert run(root, "overfit").code == 0
    assert CACHED in run(root, "overfit").stdout
    models = root / "models" / "overfit_models.py"
    models.write_text(
        models.read_text().replace("torch.arange(16) % 4", "torch.arange(16) % 4 + 4")
    )  # labels out of range: the model no longer trains
    broken = run(root, "overfit")
    assert broken.code == 1 and "FAIL" in broken.stdout, broken.output


def _environment(root: Path, name: str, *options: str) -> Path:
    """``root/name/bin/python``: this interpreter, with ``options`` (-S: no torch)."""
    python = root / name / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" {" ".join(options)} "$@"\n')
    python.chmod(0o755)
    return python.parent


def test_a_pass_in_one_discovered_environment_is_not_served_in_another(tmp_path):
    root = make_project(tmp_path / "project")
    with_torch = _environment(tmp_path, "with-torch")
    without = _environment(tmp_path, "without-torch", "-S")

    def overfit(*path: Path):
        scratch = tmp_path / f"scratch-{uuid.uuid4().hex}"
        search = os.pathsep.join([*map(str, path), "/usr/bin", "/bin"])
        environ = {"MLSMOKE_PYTHON": "", "PATH": search}
        outcome = run_cli(["overfit"], root, scratch, limit=LIMIT, env=environ)
        assert_clean(outcome)
        return outcome

    assert overfit(with_torch).code == 0
    assert CACHED in overfit(with_torch).stdout
    switched = overfit(without)  # an environment where torch does not import
    assert switched.code == 2 and "PASS" not in switched.stdout, switched.output
    assert "cannot import torch" in switched.stderr
    again = overfit(without, with_torch)  # the same interpreter, found second
    assert again.code == 0, again.output
