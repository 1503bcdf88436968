"""offline_hooks=yes: rewrite the generated .pre-commit-config.yaml for a machine that
reaches a package index but not GitHub, with mlsmoke's own offline_hooks module (loaded
by path: the template runs where mlsmoke may not be importable).

Cookiecutter renders this file before running it in the generated project.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

OFFLINE = "{{ cookiecutter.offline_hooks }}" == "yes"
HOOK_REPO = r"""{{ cookiecutter.__mlsmoke_repo }}"""
HOOK_REV = r"""{{ cookiecutter.__mlsmoke_rev }}"""
MODULE = r"""{{ offline_hooks_module }}"""
CONFIG = Path(".pre-commit-config.yaml")


def main() -> int:
    if not OFFLINE:
        return 0
    if not os.path.isabs(HOOK_REPO):
        print(
            f"error: offline_hooks=yes takes mlsmoke's hooks from a local clone, and "
            f"{HOOK_REPO} is not one: generate with `mlsmoke new --offline` from a "
            "clone's install, or pass __mlsmoke_repo=PATH __mlsmoke_rev=REV",
            file=sys.stderr,
        )
        return 1
    if not MODULE or not Path(MODULE).is_file():
        print(
            "error: offline_hooks=yes needs mlsmoke's offline_hooks.py beside the "
            "template, and this copy of the template has none",
            file=sys.stderr,
        )
        return 1
    spec = importlib.util.spec_from_file_location("mlsmoke_offline_hooks", MODULE)
    offline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(offline)
    text = CONFIG.read_text(encoding="utf-8")
    CONFIG.write_text(
        offline.offline_config_text(text, HOOK_REPO, HOOK_REV), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
