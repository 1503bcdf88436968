"""Where a project's ``.pre-commit-config.yaml`` fetches mlsmoke's hooks from: a
``repo:`` and a ``rev:`` that pre-commit can check out.

In order:

1. ``--hooks-repo URL_OR_PATH --hooks-rev REV``, as given (a local repository's rev
   must exist in it);
2. the checkout this mlsmoke runs from (an editable install, or a local clone pip
   installed from, as its ``direct_url.json`` says): the release tag ``v<version>`` of
   the upstream repository when the checkout's HEAD is that tag and a remote is
   upstream, else the clone's path and its HEAD commit;
3. a git URL pip installed from (``direct_url.json``'s ``vcs_info``): that URL at the
   commit pip installed;
4. an install from a package index: a release, so the upstream repository at
   ``v<version>`` (docs/releasing.md: every release is tagged).

A wheel or sdist installed from a file says nothing of where its hooks live: that is
a usage error asking for ``--hooks-repo`` and ``--hooks-rev``. No rev is ever made up.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import mlsmoke
from mlsmoke.errors import UsageError
from mlsmoke.git_url import git_url

UPSTREAM_URL = "https://github.com/mlsmoke/mlsmoke"
MANIFEST = ".pre-commit-hooks.yaml"
ASK = "pass --hooks-repo URL_OR_PATH --hooks-rev REV"


@dataclass(frozen=True)
class HookSource:
    repo: str  # a URL, or a local repository's absolute path
    rev: str
    why: str  # where the pair was found, for init's and new's summaries

    @property
    def is_path(self) -> bool:
        return os.path.isabs(self.repo)

    @property
    def requirement(self) -> str:
        """The pip requirement of mlsmoke at this repo and rev (a local path as a
        ``file://localhost/`` URL: see :mod:`mlsmoke.git_url`)."""
        return f"mlsmoke @ git+{git_url(self.repo)}@{self.rev}"


def release_tag(version: str = mlsmoke.__version__) -> str:
    return f"v{version}"


def find_hook_source(repo: str | None = None, rev: str | None = None) -> HookSource:
    """The repo and rev to write (see the module's docstring)."""
    if repo is not None or rev is not None:
        return given(repo, rev)
    checkout = running_checkout()
    if checkout is not None:
        return from_checkout(checkout, "the checkout mlsmoke runs from")
    return from_direct_url(installed_direct_url())


def given(repo: str | None, rev: str | None) -> HookSource:
    if repo is None:
        raise UsageError("--hooks-rev needs --hooks-repo: give both")
    path = Path(repo).expanduser()
    if "://" in repo or repo.startswith("git@"):
        if rev is None:
            raise UsageError(f"--hooks-repo {repo}: give the rev too (--hooks-rev)")
        return HookSource(repo, rev, "--hooks-repo and --hooks-rev")
    if not (path / MANIFEST).is_file():
        raise UsageError(
            f"--hooks-repo {repo}: not a URL nor a directory with {MANIFEST}"
        )
    rev = rev or _git(path, "rev-parse", "HEAD")
    if rev is None or not commit_exists(path, rev):
        raise UsageError(f"--hooks-rev {rev}: no such commit in {path}")
    return HookSource(str(path.resolve()), rev, "--hooks-repo and --hooks-rev")


def running_checkout() -> Path | None:
    """The source tree of the mlsmoke package imported here, if it is one."""
    root = Path(mlsmoke.__file__).resolve().parents[2]
    return root if (root / MANIFEST).is_file() else None


def installed_direct_url() -> dict[str, Any] | None:
    try:
        text = importlib.metadata.distribution("mlsmoke").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:
        return None


def from_direct_url(direct: dict[str, Any] | None) -> HookSource:
    """The hook source of an install, from its PEP 610 ``direct_url.json``."""
    if direct is None:
        return HookSource(UPSTREAM_URL, release_tag(), "the release installed")
    url = str(direct.get("url", ""))
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and vcs.get("commit_id"):
        requested = vcs.get("requested_revision")
        rev = requested if requested == release_tag() else vcs["commit_id"]
        local = _local_path(url)
        return HookSource(str(local) if local else url, rev, f"pip installed {url}")
    local = _local_path(url)
    if "dir_info" in direct and local is not None and (local / MANIFEST).is_file():
        return from_checkout(local, f"pip installed {local}")
    raise UsageError(
        f"mlsmoke was installed from {url or 'an unknown place'}, which does not say "
        f"where its hooks come from: {ASK}"
    )


def from_checkout(root: Path, why: str) -> HookSource:
    head = _git(root, "rev-parse", "HEAD")
    if head is None:
        raise UsageError(
            f"mlsmoke comes from {root}, which is not a git repository with a commit "
            f"that pre-commit could check out: {ASK}"
        )
    tag = release_tag()
    if _git(root, "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}") == head:
        remotes = (_git(root, "remote", "-v") or "").split()
        if any(_same_repo(url, UPSTREAM_URL) for url in remotes):
            return HookSource(UPSTREAM_URL, tag, f"{why}, at release {tag}")
    return HookSource(str(root), head, f"{why}, at its HEAD commit")


def commit_exists(path: Path, rev: str) -> bool:
    return (
        _git(path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") is not None
    )


def uncommitted(root: Path) -> bool:
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return bool(status)


def _same_repo(url: str, upstream: str) -> bool:
    def key(text: str) -> str:
        return text.removesuffix(".git").rstrip("/").split("://")[-1].lower()

    return key(url) == key(upstream)


def _local_path(url: str) -> Path | None:
    parsed = urlparse(url.removeprefix("git+"))
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _git(root: Path, *args: str) -> str | None:
    try:
        ran = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False
        )
    except (FileNotFoundError, NotADirectoryError):
        return None
    return ran.stdout.strip() or None if ran.returncode == 0 else None
