"""``init``'s choice of hook form: ``--offline`` or ``--online`` applied to the config
it wires, and the note that ``--offline`` exists when GitHub cannot be reached."""

from __future__ import annotations

from mlsmoke.adopt import github_reach, offline_switch
from mlsmoke.adopt.baselines import Project
from mlsmoke.errors import UsageError
from mlsmoke.hook_source import HookSource


def check_arguments(offline: bool, online: bool) -> None:
    if offline and online:
        raise UsageError("--offline and --online: choose one")


def switch(
    project: Project, offline: bool, online: bool, source: HookSource
) -> list[str]:
    """Convert the config's hook repos when asked; the notes saying what changed
    and what could not."""
    if not offline and not online:
        return []
    name = project.name(project.config)
    text = project.config.text
    if offline:
        done = offline_switch.to_offline(text, name, source.repo, source.rev)
        verb = "offline (from the package index)"
    else:
        done = offline_switch.to_online(text, name)
        verb = "online (from GitHub)"
    project.config.text = done.text
    notes = [f"hooks made {verb}: {url}" for url in done.converted]
    notes += [f"kept as it is: {why}" for why in done.kept]
    return notes


def github_note(project: Project, offline: bool) -> list[str]:
    """When the config names GitHub repos and git cannot reach GitHub: say so, and
    that ``--offline`` exists."""
    if offline:
        return []
    online, _ = offline_switch.form(project.config.text, project.name(project.config))
    if not online:
        return []
    why = github_reach.why_unreachable()
    if why is None:
        return []
    return [
        f"GitHub is not reachable from here ({why}): pre-commit cannot clone the "
        f"{online} hook repos from it. `mlsmoke init --offline --hooks-repo "
        "PATH_TO_MLSMOKE_CLONE` makes them `repo: local` hooks installed from the "
        "package index"
    ]
