"""A job that arrives while the worker imports what first uses need waits for the
module being imported, not for the rest: those stay pending for the next idle time."""

import sys
import textwrap
import time

import pytest

from mlsmoke.warm.first_use import FirstUse
from mlsmoke.warm.preload import native_threads

SLOW_MODULE = textwrap.dedent("""
    import pathlib, time

    pathlib.Path({started!r}).touch()
    time.sleep(0.3)
    """)


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """Two modules on sys.path; the first marks when its import begins."""
    names = [f"first_use_{tmp_path.name}_{i}" for i in range(2)]
    started = tmp_path / "started"
    (tmp_path / f"{names[0]}.py").write_text(SLOW_MODULE.format(started=str(started)))
    (tmp_path / f"{names[1]}.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield names, started
    for name in names:
        sys.modules.pop(name, None)


def test_finish_waits_for_the_module_being_imported_and_leaves_the_rest(modules):
    (slow, later), started = modules
    threads = native_threads()
    first_use = FirstUse([slow, later])
    first_use.start()
    _wait_for(started.exists)

    first_use.finish(threads)
    assert slow in sys.modules  # the import under way was finished, never cut
    assert later not in sys.modules  # a job forked now does not wait for it
    assert first_use.pending  # imported the next time the worker is idle

    first_use.start()
    first_use.finish(threads)
    assert later in sys.modules
    assert not first_use.pending


def test_every_module_is_imported_when_no_job_comes(modules):
    (slow, later), _ = modules
    first_use = FirstUse([slow, later])
    first_use.start()
    _wait_for(lambda: not first_use.importing)
    first_use.finish(native_threads())
    assert slow in sys.modules and later in sys.modules
    assert not first_use.pending


def _wait_for(condition, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "the first-use thread never got there"
        time.sleep(0.005)
