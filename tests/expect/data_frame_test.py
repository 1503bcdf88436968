"""A factory that returns a DataFrame: its numeric columns are the fields, its rows
are dealt into batches (pandas is in the dev extra, never a dependency: skipped
without it)."""

from __future__ import annotations

import pytest
import torch
from conftest import failures_of, record

pandas = pytest.importorskip("pandas")


def table(seed: int = 0, rows: int = 256, constant: bool = False):
    generator = torch.Generator().manual_seed(seed)
    frame = pandas.DataFrame(
        {
            "age": (torch.rand(rows, generator=generator) * 60 + 18).numpy(),
            "income": (torch.randn(rows, generator=generator) * 1e4 + 5e4).numpy(),
            "churned": (torch.rand(rows, generator=generator) > 0.7).long().numpy(),
            "city": ["a", "b"] * (rows // 2),  # not numeric: not a field
        }
    )
    if constant:
        frame["income"] = 0.0
    return lambda: frame


def test_columns_are_fields_and_a_constant_column_is_caught():
    suite = record(table())
    fields = {e["field"] for e in suite.expectations}
    assert {"age", "income", "churned"} <= fields and "city" not in fields
    assert failures_of(suite, table(seed=3, rows=512)) == []
    caught = failures_of(suite, table(constant=True))
    assert "constant_feature" in {f.kind for f in caught}
    assert any("a feature left constant" in (f.mechanism or "") for f in caught)
