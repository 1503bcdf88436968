"""A realistic repository that predates mlsmoke, built file by file for the tests.

It has a commented .pre-commit-config.yaml, flake8 settings in setup.cfg, scripts
without strict mode, rotten doctests, a LightningModule and a plain nn.Module factory,
and debt for every tool: unformatted code, unused imports, trailing whitespace.
"""

from __future__ import annotations

import os
from pathlib import Path

PRE_COMMIT_CONFIG = """\
# Our team's hooks. Keep this list short: every hook runs at every commit.
# (Ask in #infra before adding one.)

repos:
-   repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v6.0.0  # pinned on purpose, see INFRA-12
    hooks:
    -   id: check-yaml   # our CI configs
    # -   id: check-json  (we have no JSON)

-   repo: local
    hooks:
    -   id: no-todo-fixme
        name: no FIXME left behind
        language: pygrep
        entry: 'FIXME'
        types: [python]
# end of hooks
"""

SETUP_CFG = """\
[metadata]
name = legacy-pkg

[flake8]
# We follow black.
max-line-length = 88
extend-ignore = E203
per-file-ignores =
    src/legacy_pkg/__init__.py:F401
exclude = .git,build
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

# The team's settings.
[tool.pytest.ini_options]
addopts = "-ra"
"""

MODEL = """\
import os
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x, targets=None):
        logits = self.layers(x)
        if targets is None:
            return logits
        return nn.functional.cross_entropy(logits, targets)


def build_model() -> nn.Module:
    return Net()
"""

LIGHTNING = """\
import lightning as L
from torch import nn


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)


def build_classifier():
    return Classifier()
"""

DATA = """\
import torch


def example_batch():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=generator)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
"""

UTILS = '''\
def add( a,b ):
    """Add two numbers.

    >>> add(1, 2)
    4
    """
    return a+b
'''

CLEAN = '''\
def double(value: int) -> int:
    """Twice ``value``.

    >>> double(2)
    4
    """
    return 2 * value
'''

USAGE_MD = """\
# Usage

```python
>>> 1 + 1
3
```
"""

TRAIN_SH = """\
#!/bin/bash
data=$1
python train.py --data $data
"""

GOOD_SH = """\
#!/bin/bash
set -euo pipefail
echo "fine"
"""

FILES = {
    ".pre-commit-config.yaml": PRE_COMMIT_CONFIG,
    "setup.cfg": SETUP_CFG,
    "pyproject.toml": PYPROJECT,
    "src/legacy_pkg/__init__.py": "from legacy_pkg.model import build_model\n",
    "src/legacy_pkg/model.py": MODEL,
    "src/legacy_pkg/lit.py": LIGHTNING,
    "src/legacy_pkg/data.py": DATA,
    "src/legacy_pkg/utils.py": UTILS,
    "src/legacy_pkg/clean.py": CLEAN,
    "docs/usage.md": USAGE_MD,
    "scripts/train.sh": TRAIN_SH,
    "scripts/good.sh": GOOD_SH,
    "NOTES.txt": "trailing spaces   \nno final newline",
}
EXECUTABLE = ("scripts/train.sh", "scripts/good.sh")


def write_legacy_repo(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for name in EXECUTABLE:
        os.chmod(root / name, 0o755)
    return root
