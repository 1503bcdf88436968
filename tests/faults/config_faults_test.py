"""A pyproject.toml that is not UTF-8, through the real CLI of each hook: a config
error naming the file and the byte offset, exit 2, and no traceback."""

from __future__ import annotations

import pytest

from .cache_fault_project import GATE, run


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
