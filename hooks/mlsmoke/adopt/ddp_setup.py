"""``init``'s offer of overfit-batch-ddp: for a project whose code uses
``torch.distributed``, once the gate passed, it runs once on 2 ranks; a pass turns the
hook on (at the pre-push stage), a failure leaves it off with the verdict's reason.

A project without distributed code is not offered the hook: its loader has no
``DistributedSampler``, so every rank would read the same batch and the hook would
block every push. Script mode is not offered it either, until the gate runs a script
on N ranks.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.adopt import gate_setup
from mlsmoke.adopt import precommit_edit as edit
from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.repofiles import tracked_files
from mlsmoke.adopt.standard import CI_SKIP, DDP_HOOK, Repo
from mlsmoke.adopt.textfile import write_all
from mlsmoke.adopt.wiring import hook_ids

WORLD_SIZE = 2
DISTRIBUTED_CODE = re.compile(
    r"\b(?:torch\.distributed|DistributedDataParallel|DistributedSampler)\b"
)


def offer(project: Project, repos: Sequence[Repo]) -> None:
    """Run the gate on 2 ranks and turn the hook on, or say why it stays off."""
    name = project.name(project.config)
    if DDP_HOOK in hook_ids(project.config.text, name) or not wanted(project):
        return
    verdict = run_on_ranks(project.root)
    if not verdict.passed:
        print(
            f"mlsmoke init: {DDP_HOOK} stays off: the gate on {WORLD_SIZE} ranks did"
            f" not pass ({verdict.reason.split(':')[0]}; see above); once"
            f" `mlsmoke overfit --world-size {WORLD_SIZE}` passes, run `mlsmoke init`"
            " again",
            file=sys.stderr,
        )
        return
    project.config.text = turn_on(project.config.text, name, repos)
    write_all([project.config])
    print(
        f"mlsmoke init: the gate passed on {WORLD_SIZE} ranks; {DDP_HOOK} is on"
        " before each push (`pre-commit install --hook-type pre-push` installs it)"
    )


def wanted(project: Project) -> bool:
    """A factory-mode gate in a project whose Python code uses torch.distributed."""
    gate = toml.lookup(
        toml.parse(project.pyproject.text, project.name(project.pyproject)),
        gate_setup.TABLE,
    )
    if not isinstance(gate, dict) or "script" in gate:
        return False
    return uses_distributed(project.root)


def uses_distributed(root: Path) -> bool:
    for file in tracked_files(root):
        if "python" not in file.tags:
            continue
        try:
            text = (root / file.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if DISTRIBUTED_CODE.search(text):
            return True
    return False


def run_on_ranks(root: Path) -> gate_setup.Verdict:
    """The gate on ``WORLD_SIZE`` ranks, as the hook runs it, its output shown."""
    command = f"mlsmoke overfit --world-size {WORLD_SIZE}"
    print(f"Running the gate once on {WORLD_SIZE} ranks: {command}", flush=True)
    with tempfile.TemporaryDirectory(prefix="mlsmoke-init-") as scratch:
        report = Path(scratch) / "gate.json"
        ran = subprocess.run(
            [sys.executable, "-m", "mlsmoke", *command.split()[1:], "--json", report],
            cwd=root,
        )
        return gate_setup.verdict(ran.returncode, report)


def turn_on(text: str, name: str, repos: Sequence[Repo]) -> str:
    """``text`` with the overfit-batch-ddp hook, and it in ``ci: skip``."""
    for repo in repos:
        others = tuple(hook.id for hook in repo.hooks if hook.id != DDP_HOOK)
        text = edit.add_hooks(text, name, repo, others)
    return edit.ensure_ci_skip(text, name, (*CI_SKIP, DDP_HOOK))
