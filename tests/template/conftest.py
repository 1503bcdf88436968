"""Fixtures of the template tests."""

from baking import bake  # noqa: F401 (a fixture, registered by being imported here)
