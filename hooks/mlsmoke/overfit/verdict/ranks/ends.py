"""How each rank ended, and what the checks ask of all of them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mlsmoke.overfit.process import stacks
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.ranks.record import RankRecord, barrier_missing
from mlsmoke.overfit.verdict.result import Result
from mlsmoke.process_end import how_it_ended

RANK_ENTRY = "overfit/process/ranks.py"
_FRAME = re.compile(r'File "(.*)", line (\d+)')


@dataclass
class RankEnd:
    """One rank's exit code (negative: the signal; None: killed at the deadline), its
    record (None: it never wrote one) and its stack dump (when it was stopped)."""

    rank: int
    code: int | None
    record: dict[str, Any] | None
    stack: str = ""


class Ranks:
    def __init__(self, settings: GateSettings, ends: list[RankEnd]) -> None:
        self.settings, self.ends = settings, ends
        self.records = [
            RankRecord.from_json(end.record) for end in ends if end.record is not None
        ]

    @property
    def world_size(self) -> int:
        return self.settings.world_size

    def losses(self, rank: int) -> list[float]:
        return next((r.losses for r in self.records if r.rank == rank), [])

    def rank_zero_result(self) -> Result:
        return Result.from_json(self.records[0].result or {})

    def missed_the_barrier(self) -> list[int]:
        """The ranks the step's monitored barrier found missing: rank 0's list when
        it has one (it hears from every rank), else the ranks the others name."""
        named = {
            end.rank: barrier_missing(end.record.get("error", ""))
            for end in self.ends
            if end.record is not None
        }
        if named.get(0):
            return named[0]
        return sorted({rank for ranks in named.values() for rank in ranks})

    def barrier_evidence(self) -> list[str]:
        missing = self.missed_the_barrier()
        if not missing:
            return []
        arrived = [str(end.rank) for end in self.ends if end.rank not in missing]
        return [
            f"the step's monitored barrier ({self.settings.collective_timeout:g} s):"
            f" rank(s) {', '.join(arrived)} arrived, rank(s)"
            f" {', '.join(map(str, missing))} did not"
        ]

    def how_it_ended(self, end: RankEnd) -> str:
        if end.code is None:
            return "was still running when the gate stopped it (its stack below)"
        if end.code < 0:
            return how_it_ended(end.code)
        if end.record is None:
            return f"exited with code {end.code} before it reported"
        error = end.record.get("error") or ""
        if not error:
            return "finished"
        first_line = error.splitlines()[0][:200]
        return f"stopped at {first_line}"

    def stack_of(self, end: RankEnd) -> str:
        """Where ``end``'s rank was: the project's frames of its error, or of its
        stack when it was stopped; "" when neither shows one."""
        if end.record is not None and end.record.get("traceback"):
            return end.record["traceback"]
        if end.stack:
            frames = stacks.main_thread_frames(end.stack, RANK_ENTRY)
            return "\n".join(str(frame) for frame in stacks.user_frames(frames))
        return ""

    def innermost_line(self, end: RankEnd) -> str:
        """``file:line: source`` of the innermost project frame where ``end``'s rank
        was; "" when none shows."""
        lines = self.stack_of(end).splitlines()
        frames = [i for i, line in enumerate(lines) if line.lstrip().startswith("File")]
        if not frames:
            return ""
        found = _FRAME.match(lines[frames[-1]].strip())
        if found is None:
            return ""
        following = lines[frames[-1] + 1 :]
        source = following[0].strip() if following else ""
        place = f"{found.group(1)}:{found.group(2)}"
        return f"{place}: {source}" if source else place

    def stacks_evidence(self) -> list[str]:
        lines = []
        for end in self.ends:
            where = self.stack_of(end) or "  (no frame of the project's code)"
            lines.append(f"rank {end.rank} {self.how_it_ended(end)}:\n{where}")
        return lines


def curves_note(ranks: Ranks) -> str:
    """One loss curve per rank when they differ, one when they agree (``-v``)."""
    curves = [(r.rank, r.losses) for r in ranks.records]
    if len({tuple(losses) for _, losses in curves}) <= 1:
        return f"ranks: {ranks.world_size}, every rank's loss curve is the same"
    return "ranks: " + "; ".join(
        f"rank {rank} {_span(losses)}" for rank, losses in curves
    )


def _span(losses: list[float]) -> str:
    if not losses:
        return "no loss"
    return f"{losses[0]:.4g} -> {losses[-1]:.4g} in {len(losses) - 1} steps"
