"""The doctest hook against ``pytest --doctest-modules`` on the same generated files.

A src-layout package of generated modules, each with docstring examples and a relative
import. Two commits: (a) it touches every module with examples; (b) it touches as many
modules without a ``>>>`` (the hook skips them unread by Python; pytest still imports
and collects each). Both tools run side by side, alternating, in each repeat; the
figure is the ratio of medians.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from pathlib import Path

from benchmarks import doctest_libraries
from benchmarks.measure import ProcessRun, Summary, ratio, run_process
from benchmarks.report import Section

FUNCTIONS_PER_MODULE = 5
OPTIONFLAGS = "ELLIPSIS NORMALIZE_WHITESPACE"


def run(quick: bool) -> Section:
    modules, repeats = (20, 1) if quick else (80, 5)
    with tempfile.TemporaryDirectory(prefix="bench-doctest-") as scratch:
        root = Path(scratch)
        with_examples, without = generate_project(root, modules)
        rows = [
            compare(root, "(a) modules with examples", with_examples, repeats),
            compare(root, "(b) modules without examples", without, repeats),
        ]
    examples = modules * FUNCTIONS_PER_MODULE * 2
    generated = Section(
        title="doctest: mlsmoke doctest vs pytest --doctest-modules",
        columns=[
            "commit touches",
            "files",
            "mlsmoke doctest (s)",
            "pytest --doctest-modules (s)",
            "pytest / mlsmoke",
            "peak MiB mlsmoke / pytest",
        ],
        rows=rows,
        notes=[
            f"median of {repeats} runs each, alternating; (a) runs {examples} examples "
            f"in {modules} modules",
            "both in this interpreter, option flags ELLIPSIS and"
            " NORMALIZE_WHITESPACE; pytest with -p no:cacheprovider and plugin"
            " autoloading off (its best case)",
            "mlsmoke doctest runs as pre-commit runs it: the console script, which"
            " probes the project's interpreter (MLSMOKE_PYTHON) and runs all files in"
            " one process of it",
        ],
    )
    library_rows, explained = doctest_libraries.rows(quick)
    generated.tables.append(
        Section(
            title="doctest on real library sources (pip download, pinned)",
            columns=[
                "library",
                "commit",
                "files",
                "examples run mlsmoke / pytest",
                "failing mlsmoke / pytest",
                "disagreements",
                "mlsmoke doctest (s)",
                "pytest --doctest-modules (s)",
                "pytest / mlsmoke",
                "peak MiB mlsmoke / pytest",
            ],
            rows=library_rows,
            notes=[
                f"median of {1 if quick else 3} interleaved runs (a torch library's"
                " whole tree: one run each); the hook with --no-cache (every example"
                " runs); HF_HUB_OFFLINE=1 for both (no model downloads)",
                "same interpreter, same option flags (the project's pytest.ini),"
                " same seed before each docstring; pytest with"
                " --doctest-continue-on-failure and __doctest_skip__/"
                "__doctest_requires__ applied as pytest-doctestplus does",
                *(explained or ["no disagreement: the same examples failed"]),
            ],
        )
    )
    return generated


def compare(root: Path, label: str, files: list[str], repeats: int) -> list[object]:
    env = {
        **os.environ,
        "MLSMOKE_PYTHON": sys.executable,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    hook = [str(Path(sys.executable).with_name("mlsmoke")), "doctest", *files]
    pytest = [
        sys.executable,
        "-m",
        "pytest",
        "--doctest-modules",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        f"doctest_optionflags={OPTIONFLAGS}",
        *files,
    ]
    hook_runs: list[ProcessRun] = []
    pytest_runs: list[ProcessRun] = []
    for _ in range(repeats):
        hook_runs.append(run_process(hook, root, env).check("mlsmoke doctest"))
        result = run_process(pytest, root, env)
        if result.returncode not in (0, 5):  # 5: nothing collected, for (b)
            result.check("pytest --doctest-modules")
        pytest_runs.append(result)
    hook_summary, pytest_summary = Summary.of(hook_runs), Summary.of(pytest_runs)
    return [
        label,
        len(files),
        hook_summary.seconds,
        pytest_summary.seconds,
        ratio(pytest_summary.seconds, hook_summary.seconds),
        f"{hook_summary.peak_rss_mib:.0f} / {pytest_summary.peak_rss_mib:.0f}",
    ]


def generate_project(root: Path, modules: int) -> tuple[list[str], list[str]]:
    """A src-layout package; the relative paths with and without examples."""
    package = root / "src" / "benchpkg"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "benchpkg"\n')
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("OFFSET = 1\n")
    with_examples, without = [], []
    for index in range(modules):
        name = f"module_{index:03d}"
        (package / f"{name}.py").write_text(module_with_examples(index))
        (package / f"plain_{index:03d}.py").write_text(module_without_examples(index))
        with_examples.append(f"src/benchpkg/{name}.py")
        without.append(f"src/benchpkg/plain_{index:03d}.py")
    return with_examples, without


def module_with_examples(index: int) -> str:
    functions = "\n\n".join(textwrap.dedent(f'''\
            def shift_{n}(values):
                """Shift each value by OFFSET + {n}.

                >>> shift_{n}([1, 2, 3])
                [{2 + n}, {3 + n}, {4 + n}]
                >>> shift_{n}(range(100))  # doctest: +ELLIPSIS
                [{1 + n}, {2 + n}, ..., {100 + n}]
                """
                return [value + OFFSET + {n} for value in values]
            ''') for n in range(FUNCTIONS_PER_MODULE))
    return (
        f'"""Generated module {index}."""\n\nfrom .base import OFFSET\n\n\n{functions}'
    )


def module_without_examples(index: int) -> str:
    return (
        f'"""Generated module {index}, documented without examples."""\n\n'
        "from .base import OFFSET\n\n\n"
        "def shift(values):\n"
        '    """Shift each value by OFFSET."""\n'
        "    return [value + OFFSET for value in values]\n"
    )


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).to_markdown())
