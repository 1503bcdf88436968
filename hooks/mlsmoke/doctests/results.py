"""What the runner reports back to the hook: plain records that travel as JSON.

Standard library only: the runner builds them inside the project's interpreter.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class ExampleFailure(NamedTuple):
    """One ``>>>`` example whose output was not the expected one."""

    line: int  # 1-based line of the ``>>>`` in the file
    name: str  # the docstring's owner, e.g. ``pkg.mod.Model.forward``
    source: str
    want: str
    got: str
    raised: bool  # ``got`` is an exception the example did not expect


class FileFailure(NamedTuple):
    """No example of the file ran: its module does not import, or they do not parse."""

    summary: str  # e.g. ``cannot import pkg.mod``
    error: str  # the traceback, project frames only
    missing: str  # a dependency the interpreter lacks, else ""


class SkippedExample(NamedTuple):
    """An example that did not run, and why: ``needs torchvision``."""

    line: int
    name: str
    reason: str


class FileResult(NamedTuple):
    path: str  # as the user gave it
    attempted: int
    failures: list[ExampleFailure]
    file_failure: FileFailure | None
    skipped: list[SkippedExample] = []
    # What running it imported that the hook did not know of yet: project files
    # (relative to the root) and third-party top-level modules with their files.
    modules: list[str] = []
    packages: list[list[str]] = []

    @property
    def passed(self) -> bool:
        return not self.failures and self.file_failure is None


def result_to_json(result: FileResult) -> dict[str, Any]:
    return results_to_json([result])[0]


def results_to_json(results: list[FileResult]) -> list[dict[str, Any]]:
    return [
        {
            "path": result.path,
            "attempted": result.attempted,
            "failures": [failure._asdict() for failure in result.failures],
            "file_failure": (
                result.file_failure._asdict() if result.file_failure else None
            ),
            "skipped": [skip._asdict() for skip in result.skipped],
            "modules": result.modules,
            "packages": result.packages,
        }
        for result in results
    ]


def results_from_json(data: list[dict[str, Any]]) -> list[FileResult]:
    return [
        FileResult(
            path=item["path"],
            attempted=item["attempted"],
            failures=[ExampleFailure(**failure) for failure in item["failures"]],
            file_failure=(
                FileFailure(**item["file_failure"]) if item["file_failure"] else None
            ),
            skipped=[SkippedExample(**skip) for skip in item.get("skipped", [])],
            modules=list(item.get("modules", [])),
            packages=[list(package) for package in item.get("packages", [])],
        )
        for item in data
    ]
