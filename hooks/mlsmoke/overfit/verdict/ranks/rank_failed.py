"""A rank that died, exited early, raised alone, or was still running at the deadline.

The others then wait for it in their next collective: the gate names the rank, how
it ended, and every rank's frames."""

from __future__ import annotations

from mlsmoke.overfit.training.ranks.record import gave_up_waiting
from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "rank-failed"


def diagnose(ranks: Ranks) -> Diagnosis | None:
    lost = [end for end in ranks.ends if end.record is None]
    raised = [
        end
        for end in ranks.ends
        if end.record is not None
        and end.record.get("error")
        and not gave_up_waiting(end.record["error"])
    ]
    waited = [end for end in ranks.ends if _waited(end)]
    if lost:
        summary = "; ".join(
            f"rank {end.rank} {ranks.how_it_ended(end)}" for end in lost
        )
    elif raised and waited:  # one rank's error left the others waiting
        first = raised[0]
        summary = (
            f"rank {first.rank} raised {first.record['error']}, alone: the other"
            " ranks waited for it in a collective"
        )
    else:
        return None
    return Diagnosis(
        CODE,
        summary,
        ranks.barrier_evidence() + ranks.stacks_evidence(),
        [
            "a rank must not leave the training loop on its own: every rank takes"
            " the same number of steps and makes the same collectives",
            f"the gate stops the ranks at its timeout ({ranks.settings.timeout:g} s)"
            " or collective-timeout"
            f" ({ranks.settings.collective_timeout:g} s) after the first one ended",
        ],
    )


def _waited(end) -> bool:
    return end.record is not None and gave_up_waiting(end.record.get("error", ""))
