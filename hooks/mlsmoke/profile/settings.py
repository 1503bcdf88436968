"""``[tool.mlsmoke.profile]``: the training script ``mlsmoke profile`` runs when no
``--script`` is given, validated in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mlsmoke import config
from mlsmoke.errors import ConfigError
from mlsmoke.overfit.process.settings import script_path

HOOK = "profile"
KEY_PATH = f"{config.TOOL_PATH}.{HOOK}"

SCHEMA = {
    "script": config.Key(
        script_path, help="the training script to profile, e.g. train.py"
    ),
    "args": config.Key(
        config.argument_list, help="the script's command-line arguments"
    ),
}


@dataclass
class ProfileSettings:
    script: str | None = None
    args: list[str] = field(default_factory=list)


def load(root: Path) -> ProfileSettings:
    """``root``'s ``[tool.mlsmoke.profile]``; ConfigError naming the key."""
    parsed = config.validate(config.hook_table(root, HOOK), SCHEMA, KEY_PATH)
    script, args = parsed["script"], parsed["args"]
    if script is None:
        if args is not None:
            raise ConfigError(f'{KEY_PATH}.args: only with script = "train.py"')
        return ProfileSettings()
    if not (root / script).is_file():
        raise ConfigError(f"{KEY_PATH}.script: {script} does not exist in {root}")
    return ProfileSettings(script, args or [])
