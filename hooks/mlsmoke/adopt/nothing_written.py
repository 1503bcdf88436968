"""What ``init`` says when it wrote nothing: why, and what would change that."""

from __future__ import annotations


def why_nothing(
    online: int, offline: int, asked_offline: bool, asked_online: bool, force: bool
) -> str:
    """The reason nothing was written and the options that would write something.
    ``online``/``offline``: how many hook repos come from GitHub / the package
    index."""
    reasons = ["every hook is wired"]
    if not force:
        reasons.append("baselines and the gate's config exist")
    if asked_offline and not online:
        reasons.append("no hook repo needs GitHub (already offline)")
    if asked_online and not offline:
        reasons.append("no hook is in its offline form (already online)")
    options = []
    if online and not asked_offline:
        options.append(
            f"`--offline` turns its {online} GitHub hook repos into `repo: local`"
            " hooks from the package index"
        )
    if offline and not asked_online:
        options.append(f"`--online` turns its {offline} offline hook repos back")
    if not force:
        options.append("`--force` re-measures the baselines")
    line = f"nothing: already adopted ({'; '.join(reasons)})"
    return line + (f". {'; '.join(options)}" if options else "")
