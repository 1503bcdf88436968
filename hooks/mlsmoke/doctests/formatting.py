"""What users read: each failing example as ``path:line:``, source, expected, got."""

from __future__ import annotations

import difflib
import textwrap

from mlsmoke.doctests.results import (
    ExampleFailure,
    FileFailure,
    FileResult,
    SkippedExample,
)

# Outputs longer than this (in lines, expected or got) are shown as a unified diff.
LONG_OUTPUT_LINES = 6
INDENT = "    "


def format_results(results: list[FileResult]) -> str:
    """Every failure, then the skipped examples and a one-line summary; empty when
    everything passed and nothing was skipped."""
    blocks = []
    for result in results:
        if result.file_failure is not None:
            blocks.append(format_file_failure(result.path, result.file_failure))
        blocks += [format_failure(result.path, failure) for failure in result.failures]
    skips = [
        format_skipped(result.path, skip)
        for result in results
        for skip in result.skipped
    ]
    if skips:
        blocks.append("\n".join(skips))
    if not blocks:
        return ""
    return "\n\n".join(blocks) + "\n\n" + summary(results) + "\n"


def format_skipped(path: str, skip: SkippedExample) -> str:
    where = f"{path}:{skip.line}:"
    if skip.name and skip.name != path.rsplit("/", 1)[-1]:
        where += f" in {skip.name}"
    return f"{where} skipped: {skip.reason}"


def format_failure(path: str, failure: ExampleFailure) -> str:
    where = f"{path}:{failure.line}:"
    if failure.name and failure.name != path.rsplit("/", 1)[-1]:
        where += f" in {failure.name}"
    lines = [where, _indent(_prompted(failure.source))]
    lines += _outputs(failure)
    return "\n".join(lines)


def format_file_failure(path: str, failure: FileFailure) -> str:
    return f"{path}: {failure.summary}\n{_indent(failure.error)}"


def summary(results: list[FileResult]) -> str:
    failed_examples = sum(len(result.failures) for result in results)
    broken = sum(result.file_failure is not None for result in results)
    failing_files = sum(
        bool(result.failures or result.file_failure) for result in results
    )
    ran = sum(result.attempted for result in results)
    # When every file failed to import, "0 of 0 examples failed" would only be noise.
    parts = [f"{failed_examples} of {ran} examples failed"] if ran else []
    if broken:
        parts.append(f"{broken} {_plural(broken, 'file')} did not run")
    skipped = sum(len(result.skipped) for result in results)
    if skipped:
        parts.append(f"{skipped} skipped")
    files = f"{failing_files} of {len(results)} {_plural(len(results), 'file')}"
    return f"doctest: {files} failed: " + ", ".join(parts)


def _outputs(failure: ExampleFailure) -> list[str]:
    want, got = failure.want, failure.got
    if _is_long(want) or _is_long(got):
        diff = difflib.unified_diff(
            want.splitlines(), got.splitlines(), "expected", "got", lineterm="", n=2
        )
        return ["differences (-expected +got):", _indent("\n".join(diff))]
    lines = ["expected:", _indent(want)] if want else ["expected no output"]
    label = "raised:" if failure.raised else "got:"
    lines += [label, _indent(got)] if got else ["got no output"]
    return lines


def _prompted(source: str) -> str:
    first, *rest = source.rstrip("\n").split("\n")
    return "\n".join([f">>> {first}"] + [f"... {line}" for line in rest])


def _indent(text: str) -> str:
    return textwrap.indent(text.rstrip("\n"), INDENT, lambda line: True)


def _is_long(text: str) -> bool:
    return len(text.splitlines()) > LONG_OUTPUT_LINES


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
