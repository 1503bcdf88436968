"""A gate or a doctest that hangs ends at its timeout plus a fixed grace, and says
where it was: the phase and the user's stack."""

from __future__ import annotations

import pytest

from .faultkit import Fault, assert_clean

TIMEOUT = 1.5
# From the hang's start to the CLI's exit: the timeout, the grace before the kill
# (2.5 s), and room for a loaded 2-core machine.
BOUND = TIMEOUT + 2.5 + 6.0


FACTORY_HANGS = "look for a lock, an input() or a network call"
TOO_SLOW = "raise tool.mlsmoke.overfit.smoke.timeout"


@pytest.mark.parametrize(
    ("keys", "reached", "says", "advice"),
    [
        (
            {"model": "fault_factories:hung_model"},
            "model",
            "building the model never finished (fault_factories:hung_model had not"
            " returned)",
            FACTORY_HANGS,
        ),
        (
            {"batch": "fault_factories:hung_batch"},
            "batch",
            "building the batch never finished (fault_factories:hung_batch had not"
            " returned)",
            FACTORY_HANGS,
        ),
        (
            {"model": "fault_factories:hangs_in_training_model"},
            "training",
            "training was still running: one step is slower than the timeout",
            TOO_SLOW,
        ),
        (
            {"model": "fault_factories:slow_forward_model"},
            "forward",
            "training was still running: one step is slower than the timeout",
            TOO_SLOW,
        ),
        (
            {"model": "fault_factories:hangs_when_probed_model", "lr": 1e-9,
             "max-steps": 3},  # fmt: skip
            "probing",
            "probing (re-training to diagnose the run) was still running",
            TOO_SLOW,
        ),
    ],
    ids=["model", "batch", "training-step", "slow-forward", "probe"],
)
def test_a_hang_ends_at_the_timeout_naming_the_phase_and_the_stack(
    fault_project, mlsmoke, keys, reached, says, advice
):
    fault_project(timeout=TIMEOUT, **keys)
    outcome = mlsmoke("overfit", "--no-cache", fault=Fault(0, reached=reached))
    assert outcome.code == 1, outcome.output
    assert "overfit smoke: FAIL timeout" in outcome.stdout
    assert f"no verdict within the timeout ({TIMEOUT:g} s): {says}" in outcome.stdout
    assert "fault_factories.py" in outcome.stdout  # the user's frames
    assert "mlsmoke/overfit" not in outcome.stdout  # and only theirs
    assert advice in outcome.stdout
    other = FACTORY_HANGS if advice == TOO_SLOW else TOO_SLOW
    assert other not in outcome.stdout  # a hang and a slow step differ
    assert outcome.seconds < BOUND, outcome.seconds
    assert_clean(outcome)


DOCTEST_CONFIG = "\n[tool.mlsmoke.doctest]\ntimeout = 1\n"


def _doctest_project(root, files: dict[str, str]):
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "faults"\n' + DOCTEST_CONFIG
    )
    for name, text in files.items():
        (root / name).write_text(text)
    return root


HANGS = '''
def wait():
    """
    >>> 1 + 1
    2
    >>> import threading; threading.Event().wait()
    """
'''
FLOODS_ON_IMPORT = '''
"""
>>> 1
1
"""
while True:
    print("flood " * 100)
'''
FLOODS_IN_EXAMPLE = '''
def flood():
    """
    >>> while True: print("x" * 1000)
    """
'''
PASSES = '''
def double(x):
    """
    >>> double(3)
    6
    """
    return 2 * x
'''


def test_doctest_hangs_and_floods_fail_their_file_and_the_others_run(
    tmp_path, mlsmoke, monkeypatch
):
    monkeypatch.setenv("MLSMOKE_PYTHON", __import__("sys").executable)
    root = _doctest_project(
        tmp_path / "project",
        {"hangs.py": HANGS, "floods.py": FLOODS_ON_IMPORT,
         "floods_example.py": FLOODS_IN_EXAMPLE, "passes.py": PASSES},
    )  # fmt: skip
    outcome = mlsmoke(
        "doctest", "hangs.py", "floods.py", "floods_example.py", "passes.py", cwd=root
    )
    assert outcome.code == 1, outcome.output
    out = outcome.stdout
    assert "hangs.py: timed out after 1 s" in out
    assert "the example at line 6 was running:" in out
    assert ">>> import threading; threading.Event().wait()" in out
    assert "floods.py: timed out after 1 s" in out
    assert "its module was still importing" in out
    assert "floods_example.py: timed out after 1 s" in out
    assert "passes.py" not in out  # it ran, and passed
    assert len(out) < 20_000  # the floods' output is not all kept
    assert outcome.seconds < 3 * 1 + 10, outcome.seconds
    assert_clean(outcome)


def test_the_gates_after_a_hung_one_still_run(fault_project, mlsmoke):
    root = fault_project(timeout=TIMEOUT, model="fault_factories:hung_model")
    with (root / "pyproject.toml").open("a") as file:
        file.write(
            "\n[tool.mlsmoke.overfit.after]\n"
            'model = "fault_factories:model"\nbatch = "fault_factories:batch"\n'
            'loss = "fault_factories:loss"\nlr = 0.5\ntimeout = 20\n'
        )
    outcome = mlsmoke("overfit", "--no-cache")
    assert outcome.code == 1, outcome.output
    assert "overfit smoke: FAIL timeout" in outcome.stdout
    assert "overfit after: PASS memorized" in outcome.stdout
    assert_clean(outcome)
