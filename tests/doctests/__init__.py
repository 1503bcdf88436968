"""The doctest hook's tests.

A package, so that its conftest.py is not imported as ``conftest``, the name other
tests import tests/conftest.py by.
"""
