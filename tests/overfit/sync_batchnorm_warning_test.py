"""The sync-batchnorm warning's text: every BatchNorm module up to four, then how
many more, as the other messages that list names write it."""

from __future__ import annotations

from types import SimpleNamespace

from mlsmoke.overfit.verdict.ranks import sync_batchnorm
from mlsmoke.overfit.verdict.ranks.ends import RankEnd, Ranks


def _warning(batchnorm: list[str], batch_size: int) -> list[str]:
    record = {"rank": 0, "world_size": 2, "batchnorm": batchnorm,
              "batch_size": batch_size}  # fmt: skip
    ranks = Ranks(SimpleNamespace(world_size=2), [RankEnd(0, 0, record)])
    return [w.message for w in sync_batchnorm.warn(ranks)]


def test_six_batchnorm_modules_are_named_four_and_two_more():
    names = [f"body.{i}" for i in range(6)]
    (message,) = _warning(names, batch_size=4)
    assert (
        "BatchNorm (body.0, body.1, body.2, body.3, and 2 more) normalizes over 4"
        in (message)
    )
    assert "all 2 ranks' samples" in message


def test_a_rank_batch_of_sixteen_or_more_gets_no_warning():
    assert _warning(["body.1"], batch_size=16) == []
    assert _warning(["body.1"], batch_size=15) != []
