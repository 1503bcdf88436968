"""Fixtures of the init tests."""

from adoption import adopted, adopted_copy, pre_commit  # noqa: F401 (fixtures)
