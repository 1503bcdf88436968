"""``init``'s offer of data-expectations: once the gate passed, ``mlsmoke expect
--record`` runs once; a suite recorded turns the hook on, a failure leaves it off with
the reason. The hook is never wired before a suite exists: it would fail every commit.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from mlsmoke import config
from mlsmoke.adopt import precommit_edit as edit
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.standard import CI_SKIP, EXPECT_HOOK, Repo
from mlsmoke.adopt.textfile import write_all
from mlsmoke.adopt.wiring import hook_ids


def offer(project: Project, repos: Sequence[Repo]) -> None:
    """Record the suite and turn the hook on, or say why it stays off."""
    name = project.name(project.config)
    if EXPECT_HOOK in hook_ids(project.config.text, name):
        return
    if not has_a_batch(project.root):
        print(
            "mlsmoke init: data-expectations stays off: the gate runs a script, which"
            " gives it no batch factory; set batch in [tool.mlsmoke.expect] (a"
            ' "package.module:callable" returning the training DataLoader) and run'
            " `mlsmoke init` again",
            file=sys.stderr,
        )
        return
    recorded, why = record(project.root)
    if not recorded:
        print(
            f"mlsmoke init: data-expectations stays off: {why} (once"
            " `mlsmoke expect --record` succeeds, run `mlsmoke init` again)",
            file=sys.stderr,
        )
        return
    project.config.text = turn_on(project.config.text, name, repos)
    write_all([project.config])
    print("mlsmoke init: expectations.json recorded; data-expectations is on")


def has_a_batch(root: Path) -> bool:
    """Whether expect has a batch factory: its own, or the gate's (script mode has
    none)."""
    if config.hook_table(root, "expect").get("batch") is not None:
        return True
    return config.hook_table(root, "overfit").get("script") is None


def record(root: Path) -> tuple[bool, str]:
    print("Recording the data expectations once: mlsmoke expect --record", flush=True)
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "expect", "--record"],
        cwd=root,
        stderr=subprocess.PIPE,
        text=True,
    )
    if ran.returncode == 0:
        return True, ""
    lines = ran.stderr.strip().splitlines()
    sys.stderr.write(ran.stderr)
    return False, lines[0] if lines else f"exit {ran.returncode}"


def turn_on(text: str, name: str, repos: Sequence[Repo]) -> str:
    """``text`` with the data-expectations hook, and it in ``ci: skip``."""
    for repo in repos:
        others = tuple(hook.id for hook in repo.hooks if hook.id != EXPECT_HOOK)
        text = edit.add_hooks(text, name, repo, others)
    return edit.ensure_ci_skip(text, name, (*CI_SKIP, EXPECT_HOOK))
