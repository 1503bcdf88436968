"""No example can take the report down; a real Ctrl-C still stops the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ENDINGS = '''\
    def before():
        """
        >>> 1 + 1
        3
        """


    def ends():
        """
        >>> {ending}
        >>> 2 + 2
        5
        """


    def after():
        """
        >>> 3 + 3
        7
        """
    '''


@pytest.mark.parametrize(
    ("ending", "raised"),
    [
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise SystemExit(3)", "SystemExit: 3"),
        ("import sys; sys.exit('bye')", "SystemExit: bye"),
        ("raise GeneratorExit", "GeneratorExit"),
    ],
)
def test_an_example_raising_any_exception_is_that_examples_failure(
    write, doctest, ending: str, raised: str
) -> None:
    write({"endings.py": ENDINGS.format(ending=ending)})
    code, output = doctest("endings.py")
    assert code == 1
    where = f"endings.py:10: in endings.ends\n    >>> {ending}\n"
    assert where + "expected no output\nraised:\n" in output
    assert raised in output
    # the examples before it, after it in its docstring, and in the next docstring ran
    for line in (3, 11, 18):
        assert f"endings.py:{line}:" in output
    assert output.endswith("1 of 1 file failed: 4 of 4 examples failed\n")


def test_an_example_that_kills_its_interpreter_fails_and_the_next_files_run(
    write, doctest
) -> None:
    write(
        {
            "first.py": '">>> 1\\n2"\n',
            "endings.py": ENDINGS.format(ending="import os; os._exit(7)"),
            "last.py": '">>> 1\\n3"\n',
        }
    )
    code, output = doctest("first.py", "endings.py", "last.py")
    assert code == 1
    assert "first.py:1:" in output and "last.py:1:" in output
    assert "endings.py:3: in endings.before" in output  # found before it died
    assert (
        "endings.py:10:\n    >>> import os; os._exit(7)\nexpected no output\nraised:\n"
        "    the interpreter exited with code 7 during this example\n" in output
    )
    assert output.endswith("3 of 3 files failed: 4 of 4 examples failed\n")


def test_a_real_ctrl_c_stops_the_run_and_prints_what_was_found(
    project: Path, write
) -> None:
    write(
        {
            "fails.py": '">>> 1\\n2"\n',
            "slow.py": '">>> import pathlib, time\\n'
            ">>> _ = pathlib.Path('started').write_text('')\\n"
            '>>> time.sleep(60)"\n',
            "never.py": '">>> 1\\n3"\n',
        }
    )
    mlsmoke = Path(sys.executable).with_name("mlsmoke")
    hook = subprocess.Popen(
        [mlsmoke, "doctest", "fails.py", "slow.py", "never.py"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # as from a terminal, also where this test runs in the background
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while not (project / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(hook.pid, signal.SIGINT)
    output, _ = hook.communicate(timeout=30)
    assert hook.returncode == 130
    assert output.startswith("fails.py:1: in fails\n    >>> 1\nexpected:\n    2\n")
    assert "never.py" not in output
    assert "interrupted" in output
