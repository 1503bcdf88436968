"""The hooks ``init`` adds: the template's set, the ``ci:`` block, and the gate,
commented out with what it needs or why it is off, until its first run passes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mlsmoke.adopt import precommit_edit as edit
from mlsmoke.adopt import yamltree as tree
from mlsmoke.adopt.candidates import Candidates
from mlsmoke.adopt.standard import CI_SKIP, DDP_HOOK, EXPECT_HOOK, GATE_HOOK, Repo

HEADER = [
    "# Runs at every commit once installed: `pre-commit install`.",
    "# By hand: `pre-commit run --all-files`. Wired by `mlsmoke init`.",
]
GATE_FIRST_LINE = "# overfit-batch trains your model on one batch at every commit."
_COMMENTED_GATE = re.compile(rf"^(\s*)#\s*- id: {GATE_HOOK}\s*$")


def hook_ids(text: str, name: str) -> list[str]:
    root = tree.compose(text, name)
    if root is None:
        return []
    return [
        tree.scalar(tree.get(hook, "id")) or ""
        for repo in tree.repos(root)
        for hook in tree.hooks_of(repo)
    ]


def wire(text: str, name: str, repos: Sequence[Repo], comment: Sequence[str]) -> str:
    """``text`` with every standard hook, the gate commented out (unless the file
    has it already), and ``ci:``."""
    if not text.strip():
        text = "\n".join(HEADER) + "\nrepos:\n"
    for repo in repos:
        text = edit.add_hooks(text, name, repo, (GATE_HOOK, EXPECT_HOOK, DDP_HOOK))
    if GATE_HOOK not in hook_ids(text, name):
        text = edit.add_gate_comment(text, name, comment)
    return edit.ensure_ci_skip(text, name, CI_SKIP)


def gate_comment(
    found: Candidates, reason: Sequence[str] = (), configured: bool = False
) -> list[str]:
    """The commented-out gate: why it is off, how to turn it on, the last line the
    hook itself."""
    lines = [GATE_FIRST_LINE, *(f"# {line}" for line in reason)]
    if configured:
        lines += [
            "# [tool.mlsmoke.overfit] in pyproject.toml configures it. Once",
            "# `mlsmoke overfit` passes, run `mlsmoke init` again to turn it on,",
            "# or uncomment the next line:",
            f"# - id: {GATE_HOOK}",
        ]
        return lines
    lines.append("# It needs [tool.mlsmoke.overfit] in pyproject.toml.")
    if found.models or found.batches:
        lines.append("# Candidates found in the source (module:callable):")
        lines += [f"#   model: {c.spec}  ({c.why})" for c in found.models[:5]]
        lines += [f"#   batch: {c.spec}  ({c.why})" for c in found.batches[:5]]
    else:
        lines.append("# No candidates found: write a function that returns your model")
        lines.append("# and one that returns a batch.")
    model = found.models[0].spec if found.models else "package.module:build_model"
    batch = found.batches[0].spec if found.batches else "package.module:example_batch"
    lines += [
        "# Turn it on with (it runs once, and goes on if it passes)",
        f"#   mlsmoke init --model {model} --batch {batch}",
        f"# - id: {GATE_HOOK}",
    ]
    return lines


def _gate_block(lines: list[str]) -> tuple[int, int, str] | None:
    """The first and last line of the commented gate, and its indentation."""
    for end, line in enumerate(lines):
        match = _COMMENTED_GATE.match(line)
        if match is None:
            continue
        start = end
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
            if lines[start].strip() == GATE_FIRST_LINE:
                return start, end, match.group(1)
        return end, end, match.group(1)
    return None


def replace_gate_comment(text: str, comment: Sequence[str]) -> str:
    """``text`` with the commented gate's block replaced by ``comment``."""
    lines = text.splitlines()
    found = _gate_block(lines)
    if found is None:
        return text
    start, end, indent = found
    lines[start : end + 1] = [indent + line for line in comment]
    return "\n".join(lines) + "\n"


def turn_gate_on(text: str, name: str, repos: Sequence[Repo]) -> str:
    """``text`` with the commented gate and its instructions replaced by the hook."""
    lines = text.splitlines()
    found = _gate_block(lines)
    if found is not None:
        del lines[found[0] : found[1] + 1]
        text = "\n".join(lines) + "\n"
    for repo in repos:
        text = edit.add_hooks(text, name, repo, (EXPECT_HOOK, DDP_HOOK))
    return text
