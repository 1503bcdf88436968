"""Jobs that crash (SIGSEGV) through real pre-commit, forked by a ready worker and in
processes of their own: each hook says which job died of which signal, where the
project's code was, and what to do; the worker outlives its job's crash; a forked
job has faulthandler as its own PYTHONFAULTHANDLER says, as a fresh interpreter has."""

from __future__ import annotations

import re
import sys
import textwrap

from .warmkit import WarmProject, ready_worker, run_pre_commit

CRASHING = textwrap.dedent("""
    import os
    import signal

    import torch


    class Crashing(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 3)

        def forward(self, inputs):
            os.kill(os.getpid(), signal.SIGSEGV)
            return self.linear(inputs)


    def model():
        return Crashing()
    """)
FAULTHANDLER_FRAME = re.compile(r'File ".*doctests/runner\.py", line \d+ in main')
DOCTEST = (
    '"""\n>>> import os, signal, torch\n>>> os.kill(os.getpid(), signal.SIGSEGV)\n"""\n'
)


def _config(hook: str) -> str:
    return textwrap.dedent(f"""\
        repos:
          - repo: local
            hooks:
              - id: {hook}
                name: {hook}
                entry: {sys.executable} -m mlsmoke {hook}
                language: system
                types: [python]
                pass_filenames: {"false" if hook == "overfit" else "true"}
        """)


def _crashing_gate(project: WarmProject) -> None:
    (project.root / "crashing.py").write_text(CRASHING)
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("app:model", "crashing:model"))


def test_a_gate_that_crashes_says_where_and_what_to_do(project: WarmProject):
    _crashing_gate(project)
    worker = ready_worker(project)
    run = run_pre_commit(project, _config("overfit"))
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "FAIL killed" in output
    assert "was killed by SIGSEGV (a segmentation fault) while training" in output
    assert "where your code was" in output
    assert 'crashing.py", line 14, in forward' in output
    assert "os.kill(os.getpid(), signal.SIGSEGV)" in output
    assert "`MLSMOKE_WORKER=0 mlsmoke overfit --gate smoke`" in output
    assert project.warm_pids() == [worker]  # a job's crash is the job's alone

    alone = run_pre_commit(project, _config("overfit"), MLSMOKE_WORKER="0")
    output = alone.stdout + alone.stderr
    assert alone.returncode == 1, output
    assert 'crashing.py", line 14, in forward' in output
    assert "crashed in a process of its own (not the warm worker's)" in output
    assert "MLSMOKE_WORKER=0 mlsmoke" not in output


def test_a_doctest_example_that_crashes_is_said_as_a_crash(project: WarmProject):
    (project.root / "crashes.py").write_text(DOCTEST)
    ready_worker(project)  # started without PYTHONFAULTHANDLER
    run = run_pre_commit(project, _config("doctest"), PYTHONFAULTHANDLER="1")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert (
        "the interpreter was killed by SIGSEGV (a segmentation fault) during this"
        " example" in output
    )
    # the job's own PYTHONFAULTHANDLER, as a fresh interpreter would have it: its
    # dump of the stack is the end of the job's output
    assert FAULTHANDLER_FRAME.search(output), output

    quiet = run_pre_commit(project, _config("doctest"))
    assert "killed by SIGSEGV" in quiet.stdout
    assert not FAULTHANDLER_FRAME.search(quiet.stdout + quiet.stderr)


CRASHING_PLUGIN = textwrap.dedent('''
    """A flake8 plugin that crashes where torch is imported: the warm worker."""
    import os
    import signal
    import sys

    if "torch" in sys.modules:
        os.kill(os.getpid(), signal.SIGSEGV)


    class Plugin:
        name = "crashing"
        version = "1"

        def __init__(self, tree):
            pass

        def run(self):
            return iter(())
    ''')
FLAKE8 = textwrap.dedent("""\
    [flake8]
    extend-select = TOR0,TOR1,TOR2,TOR4

    [flake8:local-plugins]
    extension =
        CRS = crashing_plugin:Plugin
    paths = .
    """)
LOADS = "import torch\n\n\ndef load(path):\n    return torch.load(path)\n"


def test_torchfix_whose_job_crashes_in_the_worker_checks_in_its_own_process(
    project: WarmProject,
):
    (project.root / "crashing_plugin.py").write_text(CRASHING_PLUGIN)
    (project.root / ".flake8").write_text(FLAKE8)
    (project.root / "loads.py").write_text(LOADS)
    worker = ready_worker(project)
    run = run_pre_commit(project, _config("torchfix"))
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert (
        "mlsmoke torchfix: its job in the warm worker was killed by SIGSEGV (a"
        " segmentation fault); checking the files in this process instead" in output
    )
    assert "loads.py:5:" in output and "TOR102" in output
    assert project.warm_pids() == [worker]
