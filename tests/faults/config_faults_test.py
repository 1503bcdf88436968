"""Configuration mistakes through the real CLI: a pyproject.toml that is not UTF-8 (in
every hook), and numbers a hook cannot use (not a number, no limit at all): a config
error naming the file or the key, exit 2, no traceback, and never a pass."""

from __future__ import annotations

import pytest

from .cache_fault_project import GATE, cache_entries, make_project, run


@pytest.mark.parametrize("hook", ["overfit", "doctest", "strict-mode"])
def test_a_non_utf8_pyproject_is_a_config_error_from_every_hook(tmp_path, hook):
    (tmp_path / "pyproject.toml").write_bytes(
        b"# Caf\xe9 model\n" + GATE.encode("utf-8")
    )
    (tmp_path / "script.sh").write_text("#!/bin/bash\nset -euo pipefail\necho hi\n")
    (tmp_path / "module.py").write_text('"""\n>>> 1 + 1\n2\n"""\n')
    target = {"strict-mode": "script.sh", "doctest": "module.py"}.get(hook, "")
    outcome = run(tmp_path, hook, *([target] if target else []))
    assert outcome.code == 2 and outcome.stdout == ""
    assert outcome.seconds < 30  # found before any interpreter starts; a loaded machine
    assert outcome.stderr == (
        f"mlsmoke {hook}: {tmp_path / 'pyproject.toml'}: not UTF-8: byte 0xe9 at"
        " offset 5 (line 1, column 6); TOML files must be UTF-8\n"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("target-ratio = nan", "target-ratio: expected a fraction between 0 and 1"),
        ("target-loss = nan", "target-loss: expected a finite number, got nan"),
        ("target-loss = -inf", "target-loss: expected a finite number, got -inf"),
        ("lr = inf", "lr: expected a positive, finite number, got inf"),
        ("lr = nan", "lr: expected a positive, finite number, got nan"),
        ("timeout = inf", "timeout: expected a finite number of seconds, above 0"),
        ("timeout = nan", "timeout: expected a finite number of seconds, above 0"),
        ("timeout = 1e300", "timeout: expected a finite number of seconds, above 0"),
        (
            "[tool.mlsmoke.overfit.tiers.pr]\ntimeout = inf",
            "tiers.pr.timeout: expected a finite number of seconds",
        ),
        ("seed = 4294967296", "seed: expected an integer from 0 to 4294967295"),
    ],
)
def test_a_number_the_gate_cannot_use_is_a_config_error_not_a_pass(
    tmp_path, line, message
):
    root = make_project(tmp_path / "project", extra=line + "\n")
    outcome = run(root, "overfit")
    assert outcome.code == 2 and outcome.stdout == "", outcome.output
    assert outcome.stderr.startswith(
        f"mlsmoke overfit: tool.mlsmoke.overfit.{message}"
    ), outcome.stderr
    assert cache_entries(root) == []


@pytest.mark.parametrize("value", ["nan", "inf", "1e300", "0"])
def test_a_doctest_timeout_that_is_no_limit_is_a_config_error(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.mlsmoke.doctest]\ntimeout = {value}\n"
    )
    (tmp_path / "hangs.py").write_text('"""\n>>> import time; time.sleep(3600)\n"""\n')
    outcome = run(tmp_path, "doctest", "hangs.py")
    assert outcome.code == 2 and outcome.seconds < 30, outcome.output
    assert outcome.stderr.startswith(
        "mlsmoke doctest: tool.mlsmoke.doctest.timeout: expected a finite number"
        " of seconds, above 0 and up to 86400 (a day), got "
    ), outcome.stderr
