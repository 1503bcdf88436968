"""The torchfix and data-expectations hooks run ahead by the warm-worker hook, through
real pre-commit: each hook takes its result when it checked what the hook would, and
reports the same either way; a fixer that rewrites a file in between voids it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from faults.faultkit import TAG_VARIABLE

from .ahead_test import MLSMOKE, _pre_commit, after_warm_worker
from .warmkit import SEEN_VARIABLE, WarmProject

EXPECT_LOADERS = Path(__file__).parents[1] / "expect" / "expect_loaders.py"
FLAKE8 = textwrap.dedent("""
    [flake8]
    extend-select = TOR102
    jobs = 1
    [flake8:local-plugins]
    extension =
        XS = seen_plugin:Seen
    paths = ./tools
    """)
# A flake8 plugin that writes down each flake8 process that loads it.
SEEN_PLUGIN = textwrap.dedent("""
    import json
    import os


    class Seen:
        name = "seen"
        version = "1"

        def __init__(self, tree):
            with open(os.environ["MLSMOKE_TEST_SEEN"], "a") as file:
                file.write(json.dumps({"what": "flake8", "pid": os.getpid()}) + "\\n")

        def run(self):
            return iter(())
    """)
LOADER = textwrap.dedent("""
    import json
    import os

    import expect_loaders


    def train():
        with open(os.environ["MLSMOKE_TEST_SEEN"], "a") as file:
            file.write(json.dumps({{"what": "expect", "pid": os.getpid()}}) + "\\n")
        return expect_loaders.{call}
    """)
# Waits for both results of the run ahead, then rewrites the files they checked.
FIXER = textwrap.dedent("""
    import pathlib, time
    results = [pathlib.Path(".mlsmoke/ahead", name)
               for name in ("torchfix.json", "data-expectations.json")]
    deadline = time.monotonic() + 120
    while not all(p.exists() for p in results) and time.monotonic() < deadline:
        time.sleep(0.05)
    pathlib.Path("checkpoint.py").write_text({safe!r})
    pathlib.Path("data.py").write_text({raw!r})
    """)
LOADS = "def restore(path):\n    return torch.load(path)\n"
LOADS_SAFELY = "def restore(path):\n    return torch.load(path, weights_only=True)\n"


def _hooks(between: str) -> str:
    return after_warm_worker(
        "between",
        between,
        f"""      - id: torchfix
        name: torchfix
        entry: {MLSMOKE} torchfix
        language: system
        types_or: [python, toml]
        files: ^pyproject\\.toml$|^(?!.*\\.toml$)
        require_serial: true
      - id: data-expectations
        name: data-expectations
        entry: {MLSMOKE} expect
        language: system
        pass_filenames: false
        types_or: [python, toml, json]
""",
    )


def _slow(seconds: float = 0.5) -> str:
    return f'{sys.executable} -c "import time; time.sleep({seconds})"'


def _ready(project: WarmProject) -> WarmProject:
    """The project with a TorchFix config, a checkpoint loader and a recorded suite."""
    root = project.root
    (root / ".flake8").write_text(FLAKE8)
    (root / "tools").mkdir()
    (root / "tools" / "seen_plugin.py").write_text(SEEN_PLUGIN)
    (root / "checkpoint.py").write_text("import torch\n\n\n" + LOADS_SAFELY)
    shutil.copy(EXPECT_LOADERS, root)
    (root / "data.py").write_text(LOADER.format(call="images()"))
    with (root / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[tool.mlsmoke.expect]\nbatch = "data:train"\n')
    (root / ".gitignore").write_text(".mlsmoke/\n")
    recorded = project.run("expect", "--record", env={"MLSMOKE_WORKER": "0"})
    assert recorded.code == 0, recorded.output
    Path(project.env[SEEN_VARIABLE]).unlink(missing_ok=True)
    return project


def _runs(project: WarmProject, what: str) -> int:
    return len({entry["pid"] for entry in project.seen() if entry["what"] == what})


def hook_output(output: str, hook_id: str) -> str:
    """A hook's exit code and output as ``pre-commit run --verbose`` shows them."""
    block = output.split(f"- hook id: {hook_id}\n", 1)[1]
    block = re.split(r"^\S.*\.{3,}", block, maxsplit=1, flags=re.M)[0]
    return "\n".join(line for line in block.splitlines() if "- duration" not in line)


def test_torchfix_and_data_expectations_take_their_runs_ahead(project: WarmProject):
    _ready(project)
    run = _pre_commit(project, _hooks(_slow()))
    assert run.returncode == 0, run.stdout + run.stderr
    assert _runs(project, "flake8") == 1  # checked once, ahead
    assert _runs(project, "expect") == 1
    assert "expect: PASS" in hook_output(run.stdout, "data-expectations")


def test_a_fixer_between_voids_what_ran_ahead(project: WarmProject):
    """The fixer waits for both results, then makes the loader safe and the batches
    raw: the hooks must see the files as the fixer left them."""
    root = _ready(project).root
    (root / "checkpoint.py").write_text("import torch\n\n\n" + LOADS)
    safe, raw = "import torch\n\n\n" + LOADS_SAFELY, LOADER.format(
        call="images(normalize=0)"
    )
    (root / "fixer.py").write_text(FIXER.format(safe=safe, raw=raw))
    run = _pre_commit(project, _hooks(f"{sys.executable} fixer.py"))
    torchfix = hook_output(run.stdout, "torchfix")
    expect = hook_output(run.stdout, "data-expectations")
    assert "TOR102" not in torchfix and "- exit code" not in torchfix, run.stdout
    assert "normalization removed" in expect and "- exit code: 1" in expect
    assert _runs(project, "flake8") == 2  # ahead, then again by the hook
    assert _runs(project, "expect") == 2


def test_failures_read_the_same_run_ahead_or_not(project: WarmProject):
    root = _ready(project).root
    (root / "checkpoint.py").write_text("import torch\n\n\n" + LOADS)
    (root / "data.py").write_text(LOADER.format(call="images(normalize=0)"))
    ahead = _pre_commit(project, _hooks(_slow()))
    assert _runs(project, "flake8") == 1 and _runs(project, "expect") == 1
    plain = _pre_commit(project, _hooks(_slow()), MLSMOKE_WORKER="0")
    assert ahead.returncode == plain.returncode == 1
    for hook_id in ("torchfix", "data-expectations"):
        shown = hook_output(ahead.stdout, hook_id)
        assert "- exit code: 1" in shown
        assert shown == hook_output(plain.stdout, hook_id)
    assert "checkpoint.py:5:13: TOR102" in hook_output(ahead.stdout, "torchfix")


def test_other_files_than_it_checked_are_checked_by_the_hook(project: WarmProject):
    """``pre-commit run --files``: the run ahead cannot tell them; the hook checks."""
    _ready(project)
    (project.root / "checkpoint.py").write_text("import torch\n\n\n" + LOADS)
    (project.root / ".pre-commit-config.yaml").write_text(_hooks(_slow()))
    run = _pre_commit_files(project, "checkpoint.py")
    assert "TOR102" in hook_output(run.stdout, "torchfix"), run.stdout
    assert _runs(project, "flake8") == 1  # by the hook alone


def _pre_commit_files(project: WarmProject, *files: str):
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
    environ = {**os.environ, **project.env, TAG_VARIABLE: project.tag}
    environ.pop("PRE_COMMIT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--verbose", "--files", *files],
        cwd=project.root,
        env=environ,
        capture_output=True,
        text=True,
        timeout=240,
    )
