"""mlsmoke init on real open-source ML packages: their PyPI sdists, downloaded at bench
time (``pip download --no-deps --no-binary :all:``), never vendored.

Each source tree becomes a git repository; ``mlsmoke init`` wires the hooks and
baselines today's debt; then real pre-commit runs ``--all-files`` with the same config,
its hooks from local sources (tests/template/offline_config.py). The figures: files,
files baselined per tool, seconds for init, and whether ``--all-files`` then passed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import yaml

from benchmarks.precommit import commit_all, hook_repo, init_git_repo, pre_commit
from benchmarks.precommit import scratch_dir
from benchmarks.report import Section
from mlsmoke.adopt.baselines import Project
from mlsmoke.offline_hooks import is_mlsmoke
from tests.template.offline_config import UPSTREAMS, offline_config

PACKAGES = (
    "lion-pytorch==0.2.3",
    "torchinfo==1.8.0",
    "einops==0.8.1",
    "vit-pytorch==1.10.1",
)
QUICK = PACKAGES[:1]
TOOLS = (
    ("flake8", "flake8"),
    ("black", "black"),
    ("shellcheck", "shellcheck"),
    ("bash-strict-mode", "strict"),
    ("doctest", "doctest"),
    ("trailing-whitespace", "whitespace"),
    ("end-of-file-fixer", "eof"),
)
# The doctests run in this interpreter, which has torch, as a project's .venv would.
PROJECT_ENV = {"MLSMOKE_PYTHON": sys.executable}


def download(requirement: str, into: Path) -> Path:
    """The sdist of ``requirement``, unpacked; returns its source tree."""
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        + ["--no-binary", ":all:", "--dest", str(into), requirement],
        check=True,
        capture_output=True,
        timeout=600,
    )
    archive = next(into.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(into / "src", filter="data")
    return next((into / "src").iterdir())


def _tracked(tree: Path) -> int:
    init_git_repo(tree)
    commit_all(tree, "sdist")
    listed = subprocess.run(
        ["git", "ls-files"], cwd=tree, capture_output=True, text=True, check=True
    )
    return len(listed.stdout.splitlines())


def adopt(tree: Path) -> tuple[float, str]:
    start = time.perf_counter()
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "init", "--no-gate"],
        cwd=tree,
        env={**os.environ, **PROJECT_ENV},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if ran.returncode:
        raise RuntimeError(f"mlsmoke init failed in {tree.name}: {ran.stderr}")
    commit_all(tree, "mlsmoke init")
    return seconds, ran.stdout


def all_files_pass(tree: Path) -> bool:
    """pre-commit --all-files with init's config, its hooks from local sources; a
    project's own hooks from repos with no offline equivalent (say, ruff) are left
    out, since this machine cannot clone them."""
    config = yaml.safe_load((tree / ".pre-commit-config.yaml").read_text("utf-8"))
    known = {"local", "meta", *UPSTREAMS}
    config["repos"] = [
        repo for repo in config["repos"] if repo["repo"] in known or is_mlsmoke(repo)
    ]
    repo = hook_repo()
    offline = tree.parent / "offline-config.yaml"
    offline.write_text(yaml.safe_dump(offline_config(config, str(repo.path), repo.rev)))
    home = scratch_dir() / "pre-commit-home"
    ran = pre_commit(
        tree, home, "run", "--all-files", "--config", str(offline), env=PROJECT_ENV
    )
    return ran.returncode == 0


def row(requirement: str, quick: bool = False) -> list[object]:
    name = requirement.split("==")[0]
    tree = download(requirement, scratch_dir() / "sdists" / name)
    files = _tracked(tree)
    seconds, _ = adopt(tree)
    debt = Project.load(tree).read()
    counts = []
    for tool, _ in TOOLS:
        failures = debt.get(tool, {})
        codes = sum(len(c) for c in failures.values())
        counts.append(f"{len(failures)}" + (f" ({codes} codes)" if codes else ""))
    if quick:  # building the hook environments alone takes minutes
        passed = "not run (--quick)"
    else:
        passed = "yes" if all_files_pass(tree) else "NO"
    return [requirement, files, *counts, f"{seconds:.1f}", passed]


def run(quick: bool) -> Section:
    rows = [row(requirement, quick) for requirement in (QUICK if quick else PACKAGES)]
    return Section(
        title="init: adopting mlsmoke in real ML packages (PyPI sdists)",
        columns=["package", "files", *(short for _, short in TOOLS)]
        + ["init s", "--all-files passed"],
        rows=rows,
        notes=[
            "files baselined per tool (flake8: with the codes listed); init s "
            "includes running every tool once over the tree; --all-files is real "
            "pre-commit with the config init wrote, hooks from local sources",
        ],
    )
