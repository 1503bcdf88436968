"""Reading the error a run raised: its message and what kind of torch failure it is."""

from __future__ import annotations

import itertools
import re
import traceback
from typing import Any

from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem, error_chain

SHAPE_MESSAGES = (
    "shapes cannot be multiplied",
    "size mismatch",
    "must match the size of tensor",
    "the size of tensor a",
    "expected input batch_size",
    "expected target size",
    "target tensor expected",
    "target size (",
    "given groups=",
    "expected input[",
    "input.size(-1) must be equal to input_size",
    "is invalid for input of size",
    "view size is not compatible",
    "sizes of tensors must match",
    "dimension out of range",
    "using a target size",
    "expected 2d",
    "expected 3d",
    "expected 4d",
    "inconsistent tensor size",
    "doesn't match the broadcast shape",
)


# Words a check of sizes uses, whoever wrote it (torch, a library, the project's own
# assert); matched on the words of the message, and inside names like block_size.
SHAPE_WORDS = frozenset(
    "size sizes shape shapes dim dims dimension dimensions dimensional ndim ndims"
    " channel channels length lengths len seq sequence width height resolution"
    " features".split()
)
# The exception types such checks raise.
CHECK_ERRORS = (ValueError, AssertionError, RuntimeError, IndexError)


def speaks_of_shapes(text: str) -> bool:
    """Whether ``text`` speaks of sizes, shapes, dimensions, channels or lengths,
    including inside snake_case or camelCase names (``block_size``, ``numChannels``)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    words = re.split(r"[^a-z0-9]+", spaced.lower().replace("_", " "))
    return any(word in SHAPE_WORDS for word in words)


# A shape as torch and most libraries print one: torch.Size([8, 1]) or (8, 1).
_SHAPE = re.compile(r"torch\.Size\(\[([\d,\s]*)\]\)|\((\d+(?:,\s*\d+)*),?\)")


def shapes_in(text: str) -> list[tuple[int, ...]]:
    """The shapes ``text`` prints, in order."""
    found = []
    for match in _SHAPE.finditer(text):
        digits = match.group(1) if match.group(1) is not None else match.group(2)
        found.append(tuple(int(d) for d in re.findall(r"\d+", digits)))
    return found


def names_differing_shapes(text: str) -> bool:
    """Whether ``text`` prints two shapes that differ: the evidence of a mismatch.
    A word ("dimension", "size") alone is not: a deprecation warning about a
    softmax's implicit dim speaks of dimensions and matches nothing."""
    return len(set(shapes_in(text))) >= 2


def check_text(evidence: Evidence) -> str:
    """The message, or for a bare ``assert`` (no message) the asserting line itself."""
    text = message(evidence)
    if text or evidence.error is None:
        return text
    frames = traceback.extract_tb(evidence.error.__traceback__)
    return (frames[-1].line or "") if frames else ""


def is_size_check(evidence: Evidence) -> bool:
    """A check failed in the forward pass or the loss whose words speak of sizes: a
    ValueError, assert, RuntimeError or IndexError whose text (or bare ``assert``
    line) speaks of sizes, shapes or lengths. Whether it checked sizes or values is
    for the tensors to say (``_step_evidence.is_shape_check``): a value check may
    print shapes too."""
    if not raised_in_forward(evidence):
        return False
    if not isinstance(evidence.error, CHECK_ERRORS):
        return False
    return speaks_of_shapes(check_text(evidence))


MAX_CHAINED = 3  # errors followed through ``raise ... from`` and handling


def raised_locals(evidence: Evidence) -> list[list[dict[str, Any]]]:
    """The locals of the frames the error was raised through, innermost first; then
    those of the error it was raised from or while handling (a project's error that
    rewords torch's still shows torch's tensors), one list per error."""
    found: list[list[dict[str, Any]]] = []
    for error in itertools.islice(error_chain(evidence.error), MAX_CHAINED):
        frames, tb = [], error.__traceback__
        while tb is not None:
            frames.append(dict(tb.tb_frame.f_locals))
            tb = tb.tb_next
        found.append(frames[::-1])
    return found


def message(evidence: Evidence) -> str:
    """The error's message ('' when the run raised nothing)."""
    if evidence.error is None:
        return ""
    return str(evidence.error).strip()


def first_line(evidence: Evidence) -> str:
    text = message(evidence)
    return text.splitlines()[0] if text else type(evidence.error).__name__


def raised(evidence: Evidence) -> str:
    """``TypeName: first line`` of the error, for an evidence line."""
    return f"{type(evidence.error).__name__}: {first_line(evidence)}"


def is_torch_error(evidence: Evidence) -> bool:
    """An error raised while running the project's code, not one mlsmoke found."""
    return evidence.error is not None and not isinstance(evidence.error, ProjectProblem)


# An index past a table's rows, in torch's words for indexing and embedding lookups.
INDEX_BEYOND = (
    r"index (?P<index>-?\d+) is out of bounds for dimension \d+ with size (?P<size>\d+)"
)


def index_beyond(evidence: Evidence) -> tuple[int, int] | None:
    """``(index, size)`` when the error is an index past a table of ``size`` rows."""
    found = re.search(INDEX_BEYOND, message(evidence))
    return None if found is None else (int(found["index"]), int(found["size"]))


def problem_code(evidence: Evidence) -> str | None:
    """The code of a problem mlsmoke found in what the project gave (None for an error
    the project's code raised)."""
    error = evidence.error
    return error.code if isinstance(error, ProjectProblem) else None


def raised_in_forward(evidence: Evidence) -> bool:
    """The project's code raised during the forward pass or the loss."""
    return is_torch_error(evidence) and evidence.phase in ("forward", "loss")


def mentions(evidence: Evidence, needles: tuple[str, ...]) -> bool:
    text = message(evidence).lower()
    return any(needle in text for needle in needles)


def where(evidence: Evidence) -> str:
    """Where the error happened, for a summary: a module, or the loss."""
    if evidence.phase == "loss" or evidence.failed_module is None:
        return "the loss"
    if not evidence.failed_module:
        return "the model's forward"
    return f"module {evidence.failed_module!r}"


def module_name(name: str) -> str:
    return repr(name) if name else "the model itself"


def input_shapes(evidence: Evidence, name: str | None) -> str | None:
    if name is None or name not in evidence.module_inputs:
        return None
    shapes = evidence.module_inputs[name]
    return ", ".join(str(tuple(shape)) for shape in shapes) or "no tensors"
