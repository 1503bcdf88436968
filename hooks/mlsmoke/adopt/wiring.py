"""The hooks ``init`` adds: the template's set, the ``ci:`` block, and the gate on or
commented out with the candidates and the lines to uncomment."""

from __future__ import annotations

from collections.abc import Sequence

from mlsmoke.adopt import precommit_edit as edit
from mlsmoke.adopt import yamltree as tree
from mlsmoke.adopt.candidates import Candidates
from mlsmoke.adopt.standard import CI_SKIP, GATE_HOOK, Repo

HEADER = [
    "# Runs at every commit once installed: `pre-commit install`.",
    "# By hand: `pre-commit run --all-files`. Wired by `mlsmoke init`.",
]


def hook_ids(text: str, name: str) -> list[str]:
    root = tree.compose(text, name)
    if root is None:
        return []
    return [
        tree.scalar(tree.get(hook, "id")) or ""
        for repo in tree.repos(root)
        for hook in tree.hooks_of(repo)
    ]


def wire(
    text: str, name: str, repos: Sequence[Repo], gate_on: bool, comment: Sequence[str]
) -> str:
    """``text`` with every standard hook, the gate on or commented, and ``ci:``."""
    if not text.strip():
        text = "\n".join(HEADER) + "\nrepos:\n"
    leave_out = () if gate_on else (GATE_HOOK,)
    for repo in repos:
        text = edit.add_hooks(text, name, repo, leave_out)
    if not gate_on and GATE_HOOK not in hook_ids(text, name):
        text = edit.add_gate_comment(text, name, comment)
    return edit.ensure_ci_skip(text, name, CI_SKIP)


def gate_comment(found: Candidates) -> list[str]:
    """The commented-out gate: what it needs, the candidates, the lines to uncomment."""
    lines = [
        "# overfit-batch trains your model on one batch at every commit. It needs",
        "# [tool.mlsmoke.overfit] in pyproject.toml, which mlsmoke init did not write.",
    ]
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
        "# Turn it on with",
        f"#   mlsmoke init --model {model} --batch {batch}",
        "# or add to pyproject.toml:",
        "#   [tool.mlsmoke.overfit]",
        f'#   model = "{model}"',
        f'#   batch = "{batch}"',
        "# and uncomment the next line:",
        f"# - id: {GATE_HOOK}",
    ]
    return lines
