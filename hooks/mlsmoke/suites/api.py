"""The pytest API: ``mlsmoke.suites.check(checkpoint)``, the same check as
``mlsmoke suites check``, evaluated in the caller's own process::

    import mlsmoke.suites

    def test_checkpoint_holds_its_suites():
        checked = mlsmoke.suites.check("checkpoints/model.pt")
        assert checked.passed, checked.report()
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mlsmoke.project_root import find_project_root
from mlsmoke.suites import session, settings as schema
from mlsmoke.suites.evaluation import evaluate
from mlsmoke.suites.project_objects import resolve
from mlsmoke.suites.suite_file import read_directory


def check(
    checkpoint: str | Path | None = None,
    *,
    root: str | Path | None = None,
    model: Any = None,
    dataset: Any = None,
    device: str | None = None,
) -> session.Checked:
    """Evaluate ``checkpoint`` (default: the configured one) against the suites
    recorded under ``root`` (default: the project around the current directory).

    ``model`` (a module or a callable building one) and ``dataset`` replace the
    configured ones. Returns the outcome (``.passed``, ``.report()``); raises
    mlsmoke's errors (MlsmokeError) for bad input, as the command exits 2 on it.
    Never writes a suite file.
    """
    project = Path(root).resolve() if root is not None else find_project_root()
    settings = schema.load(project)
    if checkpoint is None and settings.checkpoint is None:
        raise schema.ConfigError(
            f"{settings.key_path('checkpoint')}: missing; pass check(checkpoint=...)"
        )
    path = project / (checkpoint if checkpoint is not None else settings.checkpoint)
    key = "check() argument checkpoint" if checkpoint is not None else (
        settings.key_path("checkpoint"))  # fmt: skip
    suites = read_directory(project / settings.directory)
    objects = resolve(session.for_check(settings), model, dataset)
    evaluation = evaluate(settings, objects, path, key, device, _progress())
    evaluation.checkpoint = str(checkpoint or settings.checkpoint)
    return session.check(settings, suites, evaluation)


def _progress():
    """A live line on a terminal's stderr; nothing in a captured run."""
    if not sys.stderr.isatty():
        return None

    def draw(done: int, total: int, loss: float) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r\033[Ksuites: evaluated {done}/{total} examples{end}")
        sys.stderr.flush()

    return draw
