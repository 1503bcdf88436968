"""Properties over generated scripts: the fixer only inserts, on the lines it touches,
and is idempotent; a verdict from a prefix of a file is the verdict on the whole file.
"""

from __future__ import annotations

import difflib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strict_mode_scripts import locate, verdict_of

from mlsmoke.strict_mode.checker import Policy, examine
from mlsmoke.strict_mode.fixer import fix

SHEBANGS = [b"#!/bin/bash", b"#!/usr/bin/env bash", b"#!/bin/sh", b"#!/bin/ksh", b""]
BLOCKS = [
    b"",
    b"# comment",
    b"# mlsmoke: disable=SM003",
    b"set -e",
    b"set -u",
    b"set -euo pipefail",
    b"set -o pipefail",
    b"set -x",
    b"set +e",
    b"set -eo pipefail  # strict",
    b'set -o errexit -- "$@"',
    b"export A=1",
    b"IFS=$'\\n\\t'",
    b'cd "$(dirname "$0")"',
    b'echo "$x"',
    b"python train.py --lr 3e-4",
    b"cat <<EOF\nset -e\n# text\nEOF",
    b"cat <<-'END' | grep x\n\tset +e\n\tEND",
    b"main() {\n  set -e\n}",
    b"if [[ -n ${CI:-} ]]; then\n  set -x\nfi",
    b"echo 'it''s' \\\n  more",
    b"ARR=(a b\n  c)",
    b"echo caf\xe9 \xff",
]
lines = st.one_of(
    st.sampled_from(BLOCKS),
    st.binary(max_size=12).filter(lambda b: b"\0" not in b),
)
scripts = st.builds(
    lambda shebang, body, newline, final: _join(shebang, body, newline, final),
    st.sampled_from(SHEBANGS),
    st.lists(lines, max_size=12),
    st.sampled_from([b"\n", b"\r\n"]),
    st.booleans(),
)
policies = st.builds(Policy, st.booleans(), st.booleans())


def _join(shebang: bytes, body: list[bytes], newline: bytes, final: bool) -> bytes:
    lines = ([shebang] if shebang else []) + [
        part for block in body for part in block.split(b"\n")
    ]
    text = newline.join(lines)
    return text + newline if final and text else text


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _fix(text: str, policy: Policy) -> str | None:
    dialect, body_start = locate(text)
    return fix(text, verdict_of(text, policy), body_start, policy)


def _is_subsequence(small: str, big: str) -> bool:
    remaining = iter(big)
    return all(char in remaining for char in small)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts, policies)
def test_fixer_only_inserts_on_the_lines_it_touches(
    data: bytes, policy: Policy
) -> None:
    text = _decode(data)
    result = _fix(text, policy)
    if result is None:
        return
    before, after = text.splitlines(keepends=True), result.splitlines(keepends=True)
    changes = [
        op
        for op in difflib.SequenceMatcher(
            None, before, after, autojunk=False
        ).get_opcodes()
        if op[0] != "equal"
    ]
    assert len(changes) <= 2
    for tag, i1, i2, j1, j2 in changes:
        assert tag in ("insert", "replace"), (tag, before[i1:i2])
        if tag == "replace":  # an amended line keeps every character it had
            assert i2 - i1 == 1
            assert _is_subsequence(before[i1], "".join(after[j1:j2]))
    if "\n" in text and text.count("\r\n") == text.count("\n"):
        assert result.count("\r\n") == result.count("\n"), "CRLF stays CRLF"
    assert result.endswith("\n") == text.endswith("\n"), "the final newline is kept"
    if text.startswith("#!"):
        assert result.startswith(text.splitlines(keepends=True)[0])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts, policies)
def test_fixer_is_idempotent_and_its_result_passes(data: bytes, policy: Policy) -> None:
    text = _decode(data)
    result = _fix(text, policy)
    if result is None:
        return
    assert verdict_of(result, policy).passed
    assert _fix(result, policy) == result


@settings(max_examples=300, deadline=None)
@given(scripts, policies, st.integers(min_value=0, max_value=400))
def test_a_prefix_decides_like_the_whole_file(
    data: bytes, policy: Policy, cut: int
) -> None:
    text = _decode(data)
    dialect, body_start = locate(text)
    whole = examine(text, True, dialect, body_start, policy)
    partial = examine(text[: max(cut, body_start)], False, dialect, body_start, policy)
    assert whole is not None
    if partial is not None:
        assert partial.problems == whole.problems
