"""The batch's keys against forward()'s parameters, when the batch is passed by
keyword: keys one or two edits from a parameter no key fills (``label`` for
``labels``), and parameters no key fills that the evidence points at."""

from __future__ import annotations

import re

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.diagnoses import _errors, _step_evidence
from mlsmoke.overfit.verdict.gate_run import GateRun

MAX_EDITS = 2


def missing_inputs(run: GateRun) -> list[str]:
    """forward() parameters the batch passed by keyword does not fill, that the
    evidence points at: a target parameter when the run failed without a loss or
    raised, else the parameters the error names. A size check is left to shape-error.
    """
    evidence = run.evidence
    if run.loss_fn is not None or evidence.forward_parameters is None:
        return []
    if _step_evidence.is_shape_check(run) or _errors.mentions(
        evidence, _errors.SHAPE_MESSAGES
    ):
        return []
    keys = {f.name for f in evidence.batch_fields}
    unfilled = [p for p in evidence.forward_parameters if p not in keys]
    if not keys or not unfilled or not _by_keyword(evidence):
        return []
    targets = [p for p in unfilled if p in forward_probes.TARGET_NAMES]
    if targets:
        return targets[:1]
    text = _errors.message(evidence)
    return [p for p in unfilled if re.search(rf"\b{re.escape(p)}\b", text)]


def _by_keyword(evidence: Evidence) -> bool:
    """The batch was a mapping (its fields are keys, not positions)."""
    return evidence.batch_by_keyword


def key_typos(run: GateRun) -> list[tuple[str, str]]:
    """(batch key, forward parameter) pairs one or two edits apart, when the batch is
    passed to the model by keyword (no loss callable)."""
    evidence = run.evidence
    if run.loss_fn is None and evidence.forward_parameters is not None:
        keys = [f.name for f in evidence.batch_fields]
        return close_names(keys, evidence.forward_parameters)
    return []


def close_names(keys: list[str], parameters: list[str]) -> list[tuple[str, str]]:
    """Each key that is no parameter but one or two edits from a parameter no key
    fills: ``label`` for ``labels``, ``input_id`` for ``input_ids``."""
    unfilled = [p for p in parameters if p not in keys]
    pairs = []
    for key in keys:
        if key in parameters:
            continue
        near = [
            (distance, p)
            for p in unfilled
            if (distance := edit_distance(key.lower(), p.lower())) <= MAX_EDITS
            and 2 * distance < min(len(key), len(p))
        ]
        if near:
            pairs.append((key, min(near)[1]))
    return pairs


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: insertions, deletions and substitutions."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            )
        previous = current
    return previous[-1]
